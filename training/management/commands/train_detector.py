from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from conflicts.detection.classifier import WEIGHTS_PATH
from training.dataset import PairsFileError
from training.detector import TrainConfig, train
from training.embedcache import EmbeddingCache
from training.management.training_data import add_training_data_arguments, training_data


class Command(BaseCommand):
    help = (
        "Train the tier-1 pair classifier: grouped cross-validation for honest figures and calibration, then a fit "
        "on everything, written to conflicts/detection/weights/. Deterministic: the same data gives the same weights."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_training_data_arguments(parser)
        parser.add_argument("--out", type=Path, default=WEIGHTS_PATH)
        parser.add_argument("--no-cv", action="store_true", help="skip cross-validation (no held-out figures)")
        defaults = TrainConfig()
        parser.add_argument("--hidden", type=int, default=defaults.hidden, help="hidden units; 0 = logistic")
        parser.add_argument("--epochs", type=int, default=defaults.epochs)
        parser.add_argument("--folds", type=int, default=defaults.folds)
        parser.add_argument("--seed", type=int, default=defaults.seed)
        parser.add_argument("--ensemble", type=int, default=defaults.ensemble, help="networks averaged (seeds seed…)")

    def handle(self, *args: Any, **options: Any) -> None:
        from memories.embeddings import embed_texts, get_embedder

        if options["ensemble"] < 1:
            raise CommandError(f"--ensemble must be at least 1, not {options['ensemble']}")
        data = training_data(options)
        if os.environ.get("OMP_NUM_THREADS") != "1":
            self.stderr.write("note: set OMP_NUM_THREADS=1 for bit-identical weights across machines")
        config = TrainConfig(
            hidden=options["hidden"],
            epochs=options["epochs"],
            folds=options["folds"],
            seed=options["seed"],
            ensemble=options["ensemble"],
        )
        embedder = get_embedder().name
        # Vectors from another embedder would train a detector for inputs it never sees.
        cache = EmbeddingCache(data.cache / f"embeddings-{embedder}.npz", embed_texts)
        try:
            metadata = train(
                pairs_path=data.pairs,
                dialogue_path=data.dialogues,
                domain_path=data.domain,
                slots_path=data.slots,
                out_path=options["out"],
                embed=cache,
                embedder=embedder,
                config=config,
                cross_validation=not options["no_cv"],
                log=lambda line: self.stdout.write(line),
            )
        except PairsFileError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            cache.save()
        self.stdout.write(f"wrote {options['out']} and {options['out'].with_suffix('.json')}")
        if metadata["held_out"]:
            self.stdout.write(json.dumps(metadata["held_out"]["overall"], indent=2))
