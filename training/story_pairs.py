"""Story pairs: what the labelled stories' subjects say about which fact replaced which, as reader pairs.

A clear subject of a story names the fact that holds now and lists every fact
``about`` it. Read as pairs (docs/DETECTION.md, "a lookup reader taught by the
stories' own subjects"):

- an older fact of the subject against its current fact (a day or more
  newer): ``update`` — the current fact is the subject's newer value;
- an older fact of another subject against the current fact: ``compatible``
  — sharing a story and a few words makes no update;
- the current fact against any fact a day or more newer: ``compatible`` —
  the current fact still holds, so nothing later replaced it.

Pairs are in the pairs format (``id``, ``a``, ``b``, ``label``, ``source``,
``a_time``, ``b_time``), so ``train_cross_encoder --slots`` reads them beside
the hand-written slot and stage pairs. Only dev stories may go in: a reader
taught a validation story has read it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

SOURCE = "stories"
MIN_APART = dt.timedelta(days=1)


def _at(fact: dict[str, Any]) -> dt.datetime:
    return dt.datetime.fromisoformat(fact["at"].replace("Z", "+00:00"))


def story_pairs(stories: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every story's clear subjects → update and compatible pairs, in story order, each pair once."""
    return [
        _row(story["id"], older, newer, label) for story in stories for older, newer, label in _labelled_pairs(story)
    ]


def _labelled_pairs(story: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any], str]]:
    """(older fact, newer fact, label) for one story: the first label given to a pair holds; a day apart at least."""
    facts = {fact["id"]: fact for fact in story["facts"]}
    subjects_of: dict[str, set[int]] = {}
    for index, subject in enumerate(story["current"]):
        for fact_id in {*subject.get("about", []), subject["fact_id"]}:
            subjects_of.setdefault(fact_id, set()).add(index)
    labelled: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any], str]] = {}
    for subject in story["current"]:
        if subject["status"] != "clear" or subject["fact_id"] not in facts:
            continue
        current = facts[subject["fact_id"]]
        about = set(subject.get("about", [])) | {current["id"]}
        for fact in story["facts"]:
            if fact["id"] == current["id"]:
                continue
            if fact["id"] in about:
                candidates = [(fact, current, "update")]
            elif not subjects_of.get(fact["id"], set()) & subjects_of[current["id"]]:
                candidates = [(fact, current, "compatible")]
            else:
                candidates = []
            candidates.append((current, fact, "compatible"))
            for older, newer, label in candidates:
                if _at(newer) - _at(older) >= MIN_APART:
                    labelled.setdefault((older["id"], newer["id"]), (older, newer, label))
    return list(labelled.values())


def _row(story_id: str, older: dict[str, Any], newer: dict[str, Any], label: str) -> dict[str, Any]:
    return {
        "id": f"{SOURCE}-{story_id}-{older['id']}-{newer['id']}",
        "a": older["text"],
        "b": newer["text"],
        "label": label,
        "source": SOURCE,
        "a_time": _at(older).date().isoformat(),
        "b_time": _at(newer).date().isoformat(),
    }
