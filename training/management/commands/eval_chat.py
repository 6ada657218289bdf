from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.errors import InvalidInput
from training.chat import BAR, SPLITS, evaluate_set, in_split, parse_own_chats, read_decode
from training.management.training_data import default_eval_dir

OWN = Path(__file__).resolve().parents[2] / "data" / "chat-own.txt"
DECODE = default_eval_dir() / "decode-human-bot.jsonl"


class Command(BaseCommand):
    help = (
        "Replay friendly conversations through ingestion and the narrative detective — DECODE dialogues as turns, "
        "the project's own chats as turns and as extracted fact sentences — and print cards, automatic supersedes "
        "and merges per 1,000 facts and the share of facts marked contradicted. Nothing is kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--own", type=Path, default=OWN, help="the project's chats (chat-own.txt notation)")
        parser.add_argument("--decode", type=Path, default=DECODE, help="DECODE dialogues (JSON Lines)")
        parser.add_argument("--decode-limit", type=int, default=None, help="at most this many DECODE dialogues")
        parser.add_argument("--no-decode", action="store_true", help="only the project's own chats")
        parser.add_argument(
            "--split",
            choices=("all", *SPLITS),
            default="all",
            help="the frozen half to replay (by a hash of each conversation's id): tune rules on 'tune' only",
        )
        parser.add_argument(
            "--examples", type=int, default=None, help="keep this many example cards and decisions per set"
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("--verbose", action="store_true", help="print a few cards and decisions of each set")

    def handle(self, *args: Any, **options: Any) -> None:
        own_path: Path = options["own"]
        decode_path: Path = options["decode"]
        use_decode = not options["no_decode"]
        for path in [own_path] + ([decode_path] if use_decode else []):
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
        if options["decode_limit"] is not None and options["decode_limit"] < 1:
            raise CommandError("--decode-limit must be at least 1")
        try:
            split = options["split"]
            own = in_split(parse_own_chats(own_path.read_text()), split)
            decode = read_decode(decode_path, limit=options["decode_limit"], split=split) if use_decode else []
        except InvalidInput as exc:
            raise CommandError(exc.message) from exc
        call_command("migrate", interactive=False, verbosity=0)
        examples = options["examples"]
        sets = {
            "own_turns": evaluate_set([(c.id, c.turns) for c in own], examples=examples),
            "own_facts": evaluate_set([(c.id, c.facts) for c in own], examples=examples),
        }
        if use_decode:
            sets["decode_turns"] = evaluate_set([(c.id, c.turns) for c in decode], examples=examples)
        figures_by_set = {name: s.as_json() for name, s in sets.items()}
        report = {"bar": BAR, "split": split, "sets": figures_by_set}
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        self.stdout.write(
            f"{'set':<13} {'convs':>5} {'facts':>6} {'cards':>5} {'sup':>4} {'merge':>5} {'contra':>6}"
            f" {'cards/1k':>8} {'auto/1k':>8} {'contra%':>7}"
        )
        for name, figures in figures_by_set.items():
            self.stdout.write(
                f"{name:<13} {figures['conversations']:>5} {figures['facts']:>6} {figures['cards']:>5}"
                f" {figures['supersedes']:>4} {figures['merges']:>5} {figures['contradicted']:>6}"
                f" {figures['cards_per_1000']:>8.1f} {figures['automatic_per_1000']:>8.1f}"
                f" {figures['contradicted_percent']:>7.2f}"
            )
        self.stdout.write(
            f"bar: ≤ {BAR['cards_per_1000']:.0f} cards and ≤ {BAR['automatic_per_1000']:.0f} automatic supersedes "
            f"or merges per 1,000 facts, ≤ {BAR['contradicted_percent']:.0f} % contradicted"
        )
        if options["verbose"]:
            for name, figures in figures_by_set.items():
                for example in figures["examples"]:
                    self.stdout.write(f"-- {name}: {example}")
