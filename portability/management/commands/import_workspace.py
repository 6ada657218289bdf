from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.errors import DomainError
from portability.peers import FORMATS, detect_format, peer_facts
from portability.services import ImportReport, workspace_import, workspace_import_facts


class Command(BaseCommand):
    help = (
        "Import a workspace export (memoryhub JSON Lines), or a mem0 or Engram export, into workspace SLUG "
        "(created when missing). All or nothing; refuses a workspace that already holds rows unless --merge."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("file", help="the export file, or - for stdin")
        parser.add_argument("--format", choices=["auto", *FORMATS], default="auto", help="default: detect")
        parser.add_argument("--merge", action="store_true", help="add the rows beside what the workspace holds")
        parser.add_argument("--progress-every", type=int, default=1000, help="rows between progress lines")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["progress_every"] < 1:
            raise CommandError("--progress-every must be at least 1")
        text = self._read(options["file"])
        try:
            format_name = detect_format(text) if options["format"] == "auto" else options["format"]
            common = {"slug": options["slug"], "merge": options["merge"], "progress": self._progress}
            if format_name == "memoryhub":
                report = workspace_import(lines=_lines(text), progress_every=options["progress_every"], **common)
            else:
                report = workspace_import_facts(
                    facts=peer_facts(format_name, text),
                    importer=format_name,
                    progress_every=options["progress_every"],
                    **common,
                )
        except DomainError as exc:
            raise CommandError(f"nothing imported: {exc.message}") from exc
        self.stdout.write(_summary(report, format_name))

    def _read(self, path: str) -> str:
        if path == "-":
            return sys.stdin.read()
        try:
            with open(path, encoding="utf-8") as handle:
                return handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {path}: {exc}") from exc

    def _progress(self, done: int) -> None:
        self.stderr.write(f"  {done:,} rows imported")


def _lines(text: str) -> Iterator[str]:
    # splitlines() would also split on U+2028 and friends, which JSON strings may hold unescaped.
    return iter(text.split("\n"))


def _summary(report: ImportReport, format_name: str) -> str:
    counts = ", ".join(f"{n:,} {kind}" for kind, n in report.counts.items() if n)
    lines = [f"imported into {report.workspace.slug} ({format_name}): {counts or 'nothing'}"]
    if report.renamed_ids:
        lines.append(f"{report.renamed_ids:,} ids were taken in this hub and were given new ones")
    if report.waiting_for_embedding:
        lines.append(f"{report.waiting_for_embedding:,} facts wait for embedding by the worker")
    return "\n".join(lines)
