from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from conflicts.detection.cross_encoder import WEIGHTS_PATH
from training.dataset import PairsFileError
from training.management.training_data import add_training_data_arguments, training_data


class Command(BaseCommand):
    help = (
        "Fine-tune the cross-encoder the classifier consults where it is unsure (needs the train extra: "
        "pip install -e '.[train]'). With --held-out-fold N it learns without fold N of the classifier's grouped "
        "folds and reports that fold's held-out figures, network alone against network + cross-encoder."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        from training.cross_encoder import Recipe

        add_training_data_arguments(parser)
        parser.add_argument(
            "--out", type=Path, default=None, help=f"default {WEIGHTS_PATH}; with --held-out-fold, under --cache"
        )
        parser.add_argument("--held-out-fold", type=int, default=None, help="learn without this fold, report on it")
        defaults = Recipe()
        parser.add_argument("--epochs", type=int, default=defaults.epochs)
        parser.add_argument("--rate", type=float, default=defaults.rate, help="peak learning rate")
        parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
        parser.add_argument("--threads", type=int, default=2, help="torch threads (the weights depend on it)")

    def handle(self, *args: Any, **options: Any) -> None:
        from training import cross_encoder as ce
        from training.detector import TrainConfig

        try:
            import onnx  # noqa: F401
            import torch  # noqa: F401
        except ImportError as exc:
            raise CommandError(
                f"training the cross-encoder needs PyTorch and onnx: pip install -e '.[train]' ({exc})"
            ) from exc
        data = training_data(options)
        folds = TrainConfig().folds
        held_out = options["held_out_fold"]
        if held_out is not None and not 0 <= held_out < folds:
            raise CommandError(f"--held-out-fold must be between 0 and {folds - 1}, not {held_out}")
        for name in ("epochs", "batch_size", "threads"):
            if options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1, not {options[name]}")
        if options["rate"] <= 0:
            raise CommandError(f"--rate must be positive, not {options['rate']}")
        out = options["out"] or (
            WEIGHTS_PATH if held_out is None else data.cache / f"cross_encoder-without-fold-{held_out}.onnx"
        )
        recipe = ce.Recipe(epochs=options["epochs"], rate=options["rate"], batch_size=options["batch_size"])
        try:
            result = ce.train_from_files(
                data, out, recipe, held_out_fold=held_out, threads=options["threads"], log=self.stdout.write
            )
        except PairsFileError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"wrote {out} and {out.with_suffix('.json')}")
        if result.held_out is not None:
            report_path = out.with_name(out.stem + "-held-out.json")
            report_path.write_text(json.dumps(result.held_out, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            self.stdout.write(ce.format_comparison(result.held_out))
            self.stdout.write(f"wrote {report_path}")
