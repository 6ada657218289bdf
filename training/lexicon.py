"""The subject reader's English word list, derived from a part-of-speech lexicon.

``memories/subjects.py`` reads two things from it. Where a fact's subject
ends: its own verb list knows the verbs agents keep writing ("moved", "runs",
"costs"); a fact in other words ("Kafka expanded to 9 brokers", "Services
communicate through NATS") ran on into the predicate. And which entities are
names: a word that is no common English word ("Initech", "Acme") names
something, so "Acme Corp" and "Initech" are two things whatever a model reads.

Brill's tagger lexicon (v1.14, trained on the Brown corpus and the Penn
Treebank) gives each of ~94,000 English words its most frequent tag; the file
keeps the 42,918 lower-case alphabetic ones with their tags. It is read from the
TextBlob wheel (``textblob/en/en-lexicon.txt``, MIT; the file comes from
Pattern, BSD-3-Clause), a training-time input only: ``manage.py build_lexicon
WHEEL_OR_LEXICON`` writes the file the product reads and prints its sha256
(``memories.subjects.LEXICON_SHA256``).
"""

from __future__ import annotations

import gzip
import io
import zipfile
from pathlib import Path

LEXICON_IN_WHEEL = "textblob/en/en-lexicon.txt"


def read_lexicon(path: Path) -> str:
    """The lexicon's text, from ``en-lexicon.txt`` itself or from the TextBlob wheel that carries it."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as wheel:
            return wheel.read(LEXICON_IN_WHEEL).decode("utf-8")
    return path.read_text(encoding="utf-8")


def common_words(lexicon: str) -> list[tuple[str, str]]:
    """``(word, tag)`` for every lower-case alphabetic word, sorted by word.

    Lexicon lines are ``word TAG``; lines opening with ``;;;`` are comments.
    Capitalised entries (proper nouns, sentence openings) are left out: a name
    is what the reader must *not* find here.
    """
    words: dict[str, str] = {}
    for line in lexicon.splitlines():
        parts = line.split()
        if len(parts) < 2 or line.startswith(";;;"):
            continue
        word, tag = parts[0], parts[1]
        if word.isalpha() and word.islower():
            words[word] = tag
    return sorted(words.items())


def write_lexicon(words: list[tuple[str, str]], out: Path) -> bytes:
    """Write ``word<TAB>tag`` lines, gzipped without a timestamp (the same input gives the same bytes)."""
    text = "".join(f"{word}\t{tag}\n" for word, tag in words).encode("utf-8")
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0, filename="") as packed:
        packed.write(text)
    data = buffer.getvalue()
    out.write_bytes(data)
    return data
