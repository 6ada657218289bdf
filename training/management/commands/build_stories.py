from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from training.slot_pairs import SlotPairError, parse_slot_pairs, split_slot_pairs
from training.story_source import SourceError, parse_probes, parse_source, split, split_probes

DATA = Path(__file__).resolve().parents[2] / "data"


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> str:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_text(text)
    return hashlib.sha256(text.encode()).hexdigest()


class Command(BaseCommand):
    help = (
        "Turn the hand-written stories (training/data/stories-own/*.txt), probe pairs (probes-own.txt) and slot "
        "pairs (slot-pairs/*.txt) into JSON Lines, split dev/validation by a fixed seed (slot pairs: train/"
        "validation by a hash of their texts), and print each file's sha256. "
        "Deterministic: the same sources always give the same files."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--data", type=Path, default=DATA, help="the folder with the sources and outputs")

    def handle(self, *args: Any, **options: Any) -> None:
        data: Path = options["data"]
        sources = sorted((data / "stories-own").glob("*.txt"))
        if not sources:
            raise CommandError(f"{data / 'stories-own'}: no *.txt sources")
        slot_sources = sorted((data / "slot-pairs").glob("*.txt"))
        try:
            stories = parse_source("\n".join(path.read_text() for path in sources))
            probes = parse_probes((data / "probes-own.txt").read_text())
            slots = parse_slot_pairs([(path.stem, path.read_text()) for path in slot_sources])
        except (SourceError, SlotPairError) as exc:
            raise CommandError(str(exc)) from exc
        story_dev, story_validation = split(stories)
        probe_dev, probe_validation = split_probes(probes)
        slot_train, slot_validation = split_slot_pairs(slots)
        outputs = {
            "stories-own-dev.jsonl": story_dev,
            "stories-own-validation.jsonl": story_validation,
            "probes-dev.jsonl": probe_dev,
            "probes-validation.jsonl": probe_validation,
            "slot-pairs-train.jsonl": slot_train,
            "slot-pairs-validation.jsonl": slot_validation,
        }
        for name, rows in outputs.items():
            digest = _write_jsonl(data / name, rows)
            self.stdout.write(f"{name}: {len(rows)} rows, sha256 {digest}")
