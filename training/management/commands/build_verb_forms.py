from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memories.subjects import VERB_FORMS
from training.verb_forms import read_lexicon, verb_forms, write_verb_forms


class Command(BaseCommand):
    help = (
        "Write the subject reader's verb list from Brill's lexicon: give the TextBlob wheel "
        "(pip download textblob==0.20.1 --no-deps) or its textblob/en/en-lexicon.txt."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("lexicon", type=Path, help="textblob-0.20.1-py3-none-any.whl or en-lexicon.txt")
        parser.add_argument("--out", type=Path, default=VERB_FORMS)

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["lexicon"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            forms = verb_forms(read_lexicon(path))
        except (KeyError, OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: no lexicon could be read from it ({exc})") from exc
        if not forms:
            raise CommandError(f"{path}: no verb forms in it; is it Brill's lexicon (word TAG lines)?")
        data = write_verb_forms(forms, options["out"])
        digest = hashlib.sha256(data).hexdigest()
        self.stdout.write(f"{len(forms)} verb forms written to {options['out']}")
        self.stdout.write(f"sha256 {digest}: set memories.subjects.VERB_FORMS_SHA256 to it")
