from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from training.story_source import SourceError, parse_probes, parse_source, split, split_probes

DATA = Path(__file__).resolve().parents[2] / "data"


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> str:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_text(text)
    return hashlib.sha256(text.encode()).hexdigest()


class Command(BaseCommand):
    help = (
        "Turn the hand-written stories (training/data/stories-own/*.txt) and probe pairs (probes-own.txt) into "
        "the shared JSON Lines format, split dev/validation by a fixed seed, and print each file's sha256. "
        "Deterministic: the same sources always give the same files."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--data", type=Path, default=DATA, help="the folder with the sources and outputs")

    def handle(self, *args: Any, **options: Any) -> None:
        data: Path = options["data"]
        sources = sorted((data / "stories-own").glob("*.txt"))
        if not sources:
            raise CommandError(f"{data / 'stories-own'}: no *.txt sources")
        try:
            stories = parse_source("\n".join(path.read_text() for path in sources))
            probes = parse_probes((data / "probes-own.txt").read_text())
        except SourceError as exc:
            raise CommandError(str(exc)) from exc
        story_dev, story_validation = split(stories)
        probe_dev, probe_validation = split_probes(probes)
        outputs = {
            "stories-own-dev.jsonl": story_dev,
            "stories-own-validation.jsonl": story_validation,
            "probes-dev.jsonl": probe_dev,
            "probes-validation.jsonl": probe_validation,
        }
        for name, rows in outputs.items():
            digest = _write_jsonl(data / name, rows)
            self.stdout.write(f"{name}: {len(rows)} rows, sha256 {digest}")
