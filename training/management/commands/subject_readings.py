from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.errors import InvalidInput
from training.subject_readings import Reading, compare, readings


class Command(BaseCommand):
    help = (
        "Write every story fact's subject reading and change markers as JSON (--out), or compare two such files "
        "(--compare BEFORE AFTER): dev facts read differently are listed, frozen validation facts only counted."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="*", type=Path, help="story files (JSON Lines, the shared format)")
        parser.add_argument("--out", type=Path, help="where to write the readings (JSON)")
        parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))

    def handle(self, *args: Any, **options: Any) -> None:
        if options["compare"]:
            if options["files"] or options["out"]:
                raise CommandError("--compare takes two readings files and nothing else")
            self._compare(*options["compare"])
            return
        if not options["files"] or not options["out"]:
            raise CommandError("give story files and --out FILE, or --compare BEFORE AFTER")
        missing = [str(path) for path in options["files"] if not path.is_file()]
        if missing:
            raise CommandError(f"no such file: {', '.join(missing)}")
        try:
            read = readings(options["files"])
        except InvalidInput as exc:
            raise CommandError(exc.message) from exc
        options["out"].write_text(json.dumps(read, ensure_ascii=False, indent=0))
        self.stdout.write(f"{len(read)} facts read from {len(options['files'])} files into {options['out']}")

    def _compare(self, before_path: Path, after_path: Path) -> None:
        comparison = compare(_load(before_path), _load(after_path))
        for changed in comparison.shown:
            self.stdout.write(f"{changed.key}\n    {changed.before} -> {changed.after}")
        self.stdout.write(
            f"{len(comparison.shown)} dev facts read differently; {comparison.frozen_changed} validation facts "
            "read differently (counted, not shown)"
        )


def _load(path: Path) -> dict[str, Reading]:
    try:
        loaded = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise CommandError(f"{path}: not a readings file ({exc})") from exc
    if not isinstance(loaded, dict):
        raise CommandError(f"{path}: not a readings file (a JSON object of fact → reading)")
    return loaded
