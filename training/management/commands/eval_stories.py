from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.errors import InvalidInput
from memoryhub.llm import llm_enabled
from training.stories import evaluate, read_stories


class Command(BaseCommand):
    help = (
        "Replay fact histories (shared/eval story format) through ingestion and the narrative detective; "
        "print flag precision/recall, false flags on traps, current-truth accuracy and the automatic supersedes "
        "and merges made, with how many were wrong. Nothing is kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--json", action="store_true", help="print the README's JSON shape")
        parser.add_argument("--mode", choices=["offline", "llm"], default="offline")
        parser.add_argument("--verbose", action="store_true", help="list misses per story")
        parser.add_argument(
            "--by-rule", action="store_true", help="count flags per rule that raised them (aggregates only)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        if options["mode"] == "llm" and not llm_enabled():
            raise CommandError("--mode llm needs OPENAI_API_KEY (and OPENAI_BASE_URL for another endpoint)")
        try:
            stories = read_stories(path)
        except InvalidInput as exc:
            raise CommandError(exc.message) from exc
        # The replay writes (and rolls back) real rows: a fresh checkout's database needs its tables first.
        call_command("migrate", interactive=False, verbosity=0)
        report = evaluate(stories, mode=options["mode"])
        summary = report.as_json()
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        flags = summary["flags"]
        self.stdout.write(f"{summary['stories']} stories, {options['mode']} mode, {report.seconds:.1f}s")
        self.stdout.write(
            f"flags      precision {flags['precision']:.2f}  recall {flags['recall']:.2f}  f1 {flags['f1']:.2f}"
            f"  (expected {flags['expected']}, raised {flags['raised']}, matched {flags['matched']})"
        )
        self.stdout.write(f"traps      {summary['false_flags_on_traps']} flagged of {summary['traps']}")
        split = ", ".join(
            f"{status} {right} of {judged}" for status, (judged, right) in sorted(report.current_by_status().items())
        )
        self.stdout.write(f"current    {summary['current_truth_accuracy']:.2f} accuracy ({split})")
        auto = summary["automatic"]
        self.stdout.write(
            f"automatic  {auto['supersedes']} supersedes ({auto['wrong_supersedes']} wrong), "
            f"{auto['merges']} merges ({auto['wrong_merges']} wrong): {auto['retired_current']} retired a current "
            f"fact, {auto['across_subjects']} across subjects, {auto['unlabelled']} not labelled; "
            f"{auto['stories_with_wrong']} stories with a wrong one; {auto['settled_dispute']} settled a dispute "
            "the story wants asked"
        )
        for label, counts in (("made by ", auto["made_by_path"]), ("wrong by", auto["wrong_by_path"])):
            if counts:
                self.stdout.write(f"{label}   " + ", ".join(f"{path} {count}" for path, count in counts.items()))
        if options["by_rule"]:
            for rule, counts in summary["by_rule"].items():
                self.stdout.write(
                    f"rule       {rule}: {counts['right']} of {counts['raised']} right, {counts['on_traps']} on traps"
                )
        if options["verbose"]:
            for outcome in report.outcomes:
                raised = sorted(
                    (kind, sorted(ids), ruled.rule, ruled.judged)
                    for (kind, ids), ruled in zip(outcome.raised, outcome.by_rule, strict=True)
                )
                self.stdout.write(f"-- {outcome.story_id}: raised {raised}")
                self.stdout.write(f"   expected {sorted((k, sorted(i)) for k, i in outcome.expected)}")
                for miss in outcome.misses:
                    self.stdout.write(f"   miss: {miss}")
                for decision in outcome.decisions:
                    self.stdout.write(f"   automatic: {decision.describe()}")
