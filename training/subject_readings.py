"""What the subject reader and the change markers read in every story fact, and what a change to them touches.

A reader fix is judged on the evaluations (docs/DETECTION.md), which take 15–45 minutes; which facts it reads
differently is known in seconds. :func:`readings` reads every fact of the given story files; :func:`compare` says
which readings two versions of the code disagree on. A frozen validation file's texts never leave this module:
its facts are keyed by a hash of their text and only counted, so a comparison shows dev facts and counts the rest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from conflicts.detection.rules import change_markers
from memories.subjects import subject_of
from training.stories import read_stories

# Story files whose name holds this word are frozen validation splits: read as aggregates only.
FROZEN = "validation"

# A fact's reading: [entity, attribute, change markers (sorted)], as JSON keeps it.
Reading = list[object]


def is_frozen(path: Path | str) -> bool:
    return FROZEN in Path(path).name


def fact_key(path: Path, text: str) -> str:
    """``file|text`` for a dev fact, ``file|sha1 of the text`` for a frozen one."""
    shown = hashlib.sha1(text.encode()).hexdigest() if is_frozen(path) else text  # noqa: S324 - a key, not security
    return f"{path.name}|{shown}"


def readings(paths: Iterable[Path]) -> dict[str, Reading]:
    """Every fact's reading, keyed by :func:`fact_key`."""
    read: dict[str, Reading] = {}
    for path in paths:
        for story in read_stories(path):
            for fact in story["facts"]:
                subject = subject_of(fact["text"], fact.get("key", ""))
                markers = sorted(change_markers(fact["text"]))
                read[fact_key(path, fact["text"])] = [subject.entity, subject.attribute, markers]
    return read


@dataclass(frozen=True)
class Changed:
    key: str
    before: Reading | None
    after: Reading | None


@dataclass(frozen=True)
class Comparison:
    shown: list[Changed]  # dev facts read differently (or read by one version only), in key order
    frozen_changed: int  # frozen facts read differently: counted, never shown


def compare(before: dict[str, Reading], after: dict[str, Reading]) -> Comparison:
    shown, frozen = [], 0
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if is_frozen(key.split("|", 1)[0]):
            frozen += 1
        else:
            shown.append(Changed(key, old, new))
    return Comparison(shown, frozen)
