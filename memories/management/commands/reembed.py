from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memories.embeddings import get_embedder
from memories.services import memories_reembed_stale, memories_stale_embeddings

PROGRESS_EVERY_S = 5.0


class Command(BaseCommand):
    help = (
        "Re-embed every fact whose vector came from another embedder than the configured one "
        "(after an upgrade that changes the embedding model). Safe to stop and run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch", type=int, default=256, help="facts per transaction")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch"] < 1:
            raise CommandError(f"--batch must be at least 1, not {options['batch']}")
        name = get_embedder().name
        total = memories_stale_embeddings().count()
        if not total:
            self.stdout.write(f"every vector is from {name}; nothing to do")
            return
        self.stdout.write(f"{total:,} facts to re-embed with {name}")
        started = shown = time.monotonic()
        done = 0
        while batch := memories_reembed_stale(limit=options["batch"]):
            done += batch
            now = time.monotonic()
            if now - shown >= PROGRESS_EVERY_S:
                shown = now
                self.stdout.write(f"  {done:,} of {total:,} ({done / (now - started):,.0f} facts/s)")
        self.stdout.write(f"re-embedded {done:,} facts")
