"""The subject reader's verb list, derived from a part-of-speech lexicon.

``memories/subjects.py`` finds where a fact's subject ends by its first verb.
Its own word list knows the verbs agents keep writing ("moved", "runs",
"costs"); a fact in other words ("Kafka expanded to 9 brokers", "IC handed over
to Mateus", "Services communicate through NATS") ran on into the predicate and
the entity became "kafka expanded". Brill's tagger lexicon (v1.14, trained on
the Brown corpus and the Penn Treebank) gives each of ~94,000 English words its
most frequent tag; the reader keeps the lower-case words whose tag is a verb
form: past tense (VBD), past participle (VBN), third person (VBZ), base form
(VB) and present (VBP) — 7,975 words.

The lexicon is read from the TextBlob wheel (``textblob/en/en-lexicon.txt``,
MIT; the file comes from Pattern, BSD-3-Clause), a training-time input only:
``manage.py build_verb_forms WHEEL_OR_LEXICON`` writes the file the product
reads and prints its sha256 (``memories.subjects.VERB_FORMS_SHA256``).
"""

from __future__ import annotations

import gzip
import io
import zipfile
from pathlib import Path

VERB_TAGS = ("VB", "VBD", "VBN", "VBP", "VBZ")
LEXICON_IN_WHEEL = "textblob/en/en-lexicon.txt"


def read_lexicon(path: Path) -> str:
    """The lexicon's text, from ``en-lexicon.txt`` itself or from the TextBlob wheel that carries it."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as wheel:
            return wheel.read(LEXICON_IN_WHEEL).decode("utf-8")
    return path.read_text(encoding="utf-8")


def verb_forms(lexicon: str) -> list[tuple[str, str]]:
    """``(word, tag)`` for every lower-case alphabetic word tagged as a verb form, sorted by word.

    Lexicon lines are ``word TAG``; lines opening with ``;;;`` are comments.
    """
    forms: dict[str, str] = {}
    for line in lexicon.splitlines():
        parts = line.split()
        if len(parts) < 2 or line.startswith(";;;"):
            continue
        word, tag = parts[0], parts[1]
        if tag in VERB_TAGS and word.isalpha() and word.islower():
            forms[word] = tag
    return sorted(forms.items())


def write_verb_forms(forms: list[tuple[str, str]], out: Path) -> bytes:
    """Write ``word<TAB>tag`` lines, gzipped without a timestamp (the same input gives the same bytes)."""
    text = "".join(f"{word}\t{tag}\n" for word, tag in forms).encode("utf-8")
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0, filename="") as packed:
        packed.write(text)
    data = buffer.getvalue()
    out.write_bytes(data)
    return data
