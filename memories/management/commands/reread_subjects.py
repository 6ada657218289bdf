from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memories.models import Memory
from memories.services import memories_reread_subjects

PROGRESS_EVERY_S = 5.0
EXAMPLES_SHOWN = 10


class Command(BaseCommand):
    help = (
        "Read again what every fact is about, with this version's subject reader (after an upgrade that reads "
        "subjects better). A reviewer's correction is kept. Safe to stop and run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch", type=int, default=500, help="facts per transaction")
        parser.add_argument("--dry-run", action="store_true", help="count and show the changes, write nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch"] < 1:
            raise CommandError(f"--batch must be at least 1, not {options['batch']}")
        save = not options["dry_run"]
        total = Memory.objects.count()
        self.stdout.write(f"reading what each fact is about (facts stored: {total:,}){'' if save else '; a dry run'}")
        started = shown = time.monotonic()
        read = changed = 0
        after = None
        while True:
            batch = memories_reread_subjects(after=after, limit=options["batch"], save=save)
            if batch.last is None:
                break
            after = batch.last
            read += batch.read
            for memory, before in batch.changed:
                if changed < EXAMPLES_SHOWN:
                    self.stdout.write(f'  "{memory.text[:80]}": {before.label!r} → {memory.subject.label!r}')
                changed += 1
            now = time.monotonic()
            if now - shown >= PROGRESS_EVERY_S:
                shown = now
                self.stdout.write(f"  {read:,} read, {changed:,} changed ({read / (now - started):,.0f} facts/s)")
        verb = "changed" if save else "would change"
        self.stdout.write(f"facts read: {read:,}; {verb} the subject of {changed:,}")
