"""The training-data options ``train_detector`` and ``train_cross_encoder`` share: both learn from the same pairs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from training.dataset import DOMAIN_PAIRS, TrainingData


def default_eval_dir() -> Path:
    for candidate in (settings.BASE_DIR / "shared" / "eval", settings.BASE_DIR.parent / "shared" / "eval"):
        if candidate.is_dir():
            return candidate
    return settings.BASE_DIR / "shared" / "eval"


def add_training_data_arguments(parser: CommandParser) -> None:
    eval_dir = default_eval_dir()
    parser.add_argument("--pairs", type=Path, default=eval_dir / "pairs-dev.jsonl")
    parser.add_argument("--dialogues", type=Path, default=eval_dir / "decode-human-bot.jsonl")
    parser.add_argument("--domain", type=Path, default=DOMAIN_PAIRS)
    parser.add_argument("--no-dialogues", action="store_true", help="train without DECODE persona pairs")
    parser.add_argument("--no-domain", action="store_true", help="train without our domain pairs")
    parser.add_argument(
        "--slots",
        type=Path,
        default=None,
        help="also learn from these pairs, e.g. training/data/slot-pairs-train.jsonl (training/slot_pairs.py); "
        "the shipped weights do not (docs/DETECTION.md, Slot pairs)",
    )
    parser.add_argument("--cache", type=Path, default=Path(settings.VAR_DIR) / "cache" / "detector")


def training_data(options: dict[str, Any]) -> TrainingData:
    """The chosen files, each checked to exist."""
    data = TrainingData(
        pairs=options["pairs"],
        dialogues=None if options["no_dialogues"] else options["dialogues"],
        domain=None if options["no_domain"] else options["domain"],
        cache=options["cache"],
        slots=options.get("slots"),
    )
    for path in (data.pairs, data.dialogues, data.domain, data.slots):
        if path is not None and not path.is_file():
            raise CommandError(f"{path}: no such file")
    return data
