from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from conflicts.detection.cross_encoder import WEIGHTS_PATH as READER_PATH
from training.dataset import PairsFileError, read_pairs
from training.evaluation import SCORED, evaluate_pairs


class Command(BaseCommand):
    help = (
        "Classify labelled pairs (shared/eval pairs format) with the offline detector and print precision/recall/F1 "
        "per source and overall, the confusion matrix and pairs/s."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--json", action="store_true", help="print the README's JSON shape")
        parser.add_argument(
            "--baseline", action="store_true", help="score the MiniLM cosine ≥ 0.80 + negation-parity baseline instead"
        )
        parser.add_argument("--weights", type=Path, default=None, help="a detector.npz other than the shipped one")
        parser.add_argument(
            "--cross-encoder", type=Path, default=READER_PATH, help="a cross_encoder.onnx other than the shipped one"
        )
        parser.add_argument(
            "--no-cross-encoder",
            action="store_true",
            help="the network alone: no second reading of possible duplicates",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            pairs = read_pairs(options["file"])
        except PairsFileError as exc:
            raise CommandError(str(exc)) from exc
        reader = None if options["no_cross_encoder"] else options["cross_encoder"]
        for path in (options["weights"], reader):
            if path is not None and not path.is_file():
                raise CommandError(f"{path}: no such file")
        report = evaluate_pairs(pairs, baseline=options["baseline"], weights=options["weights"], reader=reader)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        if options["baseline"]:
            what = "baseline (cosine ≥ 0.80 + negation parity)"
        else:
            what = "offline detector" + ("" if reader else ", network alone")
        self.stdout.write(
            f"{len(pairs)} pairs, {what}, {report['pairs_per_second']:.0f} pairs/s embedding included"
            f" ({report['pairs_per_second_embeddings_given']:.0f} pairs/s with the embeddings given)"
        )
        header = f"{'source':<18} {'label':<14} {'precision':>9} {'recall':>7} {'f1':>6} {'n':>6}"
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        blocks = [("overall", report["overall"]), *report["by_source"].items()]
        for source, block in blocks:
            for label in SCORED:
                if label in block:
                    s = block[label]
                    self.stdout.write(
                        f"{source:<18} {label:<14} {s['precision']:>9.3f} {s['recall']:>7.3f} "
                        f"{s['f1']:>6.3f} {s['n']:>6}"
                    )
        self.stdout.write("")
        self.stdout.write("confusion (gold → predicted)")
        for gold, row in report["confusion"].items():
            cells = ", ".join(f"{predicted} {count}" for predicted, count in row.items())
            self.stdout.write(f"  {gold:<14} {cells}")
