from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memories.speech_acts import WEIGHTS
from training.speech_acts import train


class Command(BaseCommand):
    help = "Train the speech-act classifier (claim / question / greeting / opinion / plan) and write its weights."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", type=Path, default=WEIGHTS)

    def handle(self, *args: Any, **options: Any) -> None:
        from memories.embeddings import embed_texts

        report = train(out_path=options["out"], embed=embed_texts)
        self.stdout.write(json.dumps(report, indent=2))
        digest = hashlib.sha256(options["out"].read_bytes()).hexdigest()
        self.stdout.write(f"sha256 {digest}: set memories.speech_acts.WEIGHTS_SHA256 to it")
