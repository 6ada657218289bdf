from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.errors import InvalidInput
from training.probes import OUTCOMES, evaluate_probes, read_probes
from training.stories import read_stories
from training.story_pairs import story_probes


class Command(BaseCommand):
    help = (
        "Replay probe pairs (training/data/probes-*.jsonl) through ingestion and the narrative detective; print "
        "how many same-subject changes ended superseded or carded, and how many different-subject pairs were "
        "superseded, merged or carded, and which reading made each supersede or merge. With --stories, FILE is a "
        "story file, and its clear subjects' pairs are the probes (training/story_pairs.py). Nothing is kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("--verbose", action="store_true", help="list each pair's outcome")
        parser.add_argument(
            "--stories",
            action="store_true",
            help="FILE holds stories: replay their clear subjects' pairs, each alone, with agents and scopes",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            probes = story_probes(read_stories(path)) if options["stories"] else read_probes(path)
        except InvalidInput as exc:
            raise CommandError(exc.message) from exc
        call_command("migrate", interactive=False, verbosity=0)
        report = evaluate_probes(probes)
        summary = report.as_json()
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        self.stdout.write(f"{summary['pairs']} pairs, offline, {report.seconds:.1f}s")
        same, different = summary["same_subject_change"], summary["different_subject"]
        self.stdout.write(
            f"same subject       {same['caught']} of {same['n']} superseded or carded ({same['caught_share']:.2f})"
        )
        self.stdout.write(
            f"different subject  {different['wrongly_retired']} of {different['n']} superseded or merged, "
            f"{different['carded']} carded ({different['carded_share']:.2f})"
        )
        kinds = [("same subject", same), ("different subject", different)]
        kept = summary["current_kept"]
        if kept["n"]:
            self.stdout.write(
                f"later fact         {kept['wrongly_retired']} of {kept['n']} retired the current fact, "
                f"{kept['carded']} carded ({kept['carded_share']:.2f})"
            )
            kinds.append(("later fact", kept))
        for kind, counts in kinds:
            self.stdout.write(f"  {kind:<17} " + ", ".join(f"{o} {counts[o]}" for o in OUTCOMES))
        for kind, counts in kinds:
            if counts["retired_by"]:
                paths = ", ".join(f"{path} {n}" for path, n in counts["retired_by"].items())
                self.stdout.write(f"  {kind:<17} retired by: {paths}")
        if options["verbose"]:
            for pair in summary["per_pair"]:
                said = "; ".join(part for part in (pair["detail"], pair["path"]) if part)
                detail = f" ({said})" if said else ""
                self.stdout.write(f"-- {pair['id']} {pair['kind']}: {pair['outcome']}{detail}")
