from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memories.subjects import LEXICON
from training.lexicon import common_words, read_lexicon, write_lexicon


class Command(BaseCommand):
    help = (
        "Write the subject reader's word list from Brill's lexicon: give the TextBlob wheel "
        "(pip download textblob==0.20.1 --no-deps) or its textblob/en/en-lexicon.txt."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("lexicon", type=Path, help="textblob-0.20.1-py3-none-any.whl or en-lexicon.txt")
        parser.add_argument("--out", type=Path, default=LEXICON)

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["lexicon"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            words = common_words(read_lexicon(path))
        except (KeyError, OSError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
            raise CommandError(f"{path}: no lexicon could be read from it ({exc})") from exc
        if not words:
            raise CommandError(f"{path}: no lower-case words in it; is it Brill's lexicon (word TAG lines)?")
        data = write_lexicon(words, options["out"])
        digest = hashlib.sha256(data).hexdigest()
        self.stdout.write(f"{len(words)} words written to {options['out']}")
        self.stdout.write(f"sha256 {digest}: set memories.subjects.LEXICON_SHA256 to it")
