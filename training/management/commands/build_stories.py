from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.errors import InvalidInput
from training.probes import read_probes
from training.slot_pairs import (
    SLOT_READER_BATTERIES,
    SlotPairError,
    parse_slot_pairs,
    probes_as_slot_pairs,
    split_slot_pairs,
)
from training.story_source import SourceError, parse_probes, parse_source, split, split_probes

DATA = Path(__file__).resolve().parents[2] / "data"


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> str:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_text(text)
    return hashlib.sha256(text.encode()).hexdigest()


class Command(BaseCommand):
    help = (
        "Turn the hand-written stories (training/data/stories-own/*.txt), probe pairs (probes-own.txt), slot "
        "pairs (slot-pairs/*.txt) and stage pairs (stage-pairs/*.txt) into JSON Lines, split dev/validation by a "
        "fixed seed (slot and stage pairs: train/validation by a hash of their texts), and print each file's sha256. "
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
        # Pairs of stages (an incident opened, then resolved) teach the lookup reader only. Read after the slot
        # pairs, in one pass, so the slot pairs' drawn dates stay what they were without them.
        stage_sources = sorted((data / "stage-pairs").glob("*.txt"))
        try:
            stories = parse_source("\n".join(path.read_text() for path in sources))
            probes = parse_probes((data / "probes-own.txt").read_text())
            pairs = parse_slot_pairs([(path.stem, path.read_text()) for path in slot_sources + stage_sources])
        except (SourceError, SlotPairError) as exc:
            raise CommandError(str(exc)) from exc
        stage_names = {path.stem for path in stage_sources}

        def of_stages(row: dict[str, Any]) -> bool:  # a row's id is "slots-<source>-<line>"
            return row["id"].removeprefix("slots-").rsplit("-", 1)[0] in stage_names

        slots = [row for row in pairs if not of_stages(row)]
        stages = [row for row in pairs if of_stages(row)]
        story_dev, story_validation = split(stories)
        probe_dev, probe_validation = split_probes(probes)
        slot_train, slot_validation = split_slot_pairs(slots)
        stage_train, stage_validation = split_slot_pairs(stages)
        outputs = {
            "stories-own-dev.jsonl": story_dev,
            "stories-own-validation.jsonl": story_validation,
            "probes-dev.jsonl": probe_dev,
            "probes-validation.jsonl": probe_validation,
            "slot-pairs-train.jsonl": slot_train,
            "slot-pairs-validation.jsonl": slot_validation,
            # The lookup reader learns from both (train_cross_encoder --slots lookup-pairs-train.jsonl).
            "lookup-pairs-train.jsonl": slot_train + stage_train,
            "stage-pairs-validation.jsonl": stage_validation,
        }
        # The slot reader learns from the slot pairs and the dev probe batteries (train_cross_encoder --slots
        # slot-reader-train.jsonl); the frozen validation batteries and later batteries stay out.
        batteries = [data / name for name in SLOT_READER_BATTERIES if (data / name).is_file()]
        if batteries:
            try:
                probed = [probe for path in batteries for probe in read_probes(path)]
            except InvalidInput as exc:
                raise CommandError(str(exc)) from exc
            outputs["slot-reader-train.jsonl"] = slot_train + probes_as_slot_pairs(probed)
        for name, rows in outputs.items():
            digest = _write_jsonl(data / name, rows)
            self.stdout.write(f"{name}: {len(rows)} rows, sha256 {digest}")
