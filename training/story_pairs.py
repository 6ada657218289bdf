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

The same pairs are probes too (:func:`story_probes`, ``eval_probes --stories``):
each replayed alone, with its facts' agents and scopes, asks whether an update
ends superseded or carded and whether the pipeline retires a fact another
subject's fact or a later fact leaves standing — thousands of pairs in the
stories' own voices, where the probe batteries hold hundreds.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

SOURCE = "stories"
MIN_APART = dt.timedelta(days=1)


def _at(fact: dict[str, Any]) -> dt.datetime:
    return dt.datetime.fromisoformat(fact["at"].replace("Z", "+00:00"))


# Why a pair is labelled as it is: the probe kind it makes (training/probes.py), and its reader label.
UPDATE, OTHER_SUBJECT, LATER = "update", "other subject", "later"
PROBE_KINDS = {UPDATE: "same_subject_change", OTHER_SUBJECT: "different_subject", LATER: "current_kept"}
READER_LABELS = {UPDATE: "update", OTHER_SUBJECT: "compatible", LATER: "compatible"}


def story_pairs(stories: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every story's clear subjects → update and compatible pairs, in story order, each pair once."""
    return [
        _row(story["id"], older, newer, READER_LABELS[why])
        for story in stories
        for older, newer, why in _labelled_pairs(story)
    ]


def story_probes(stories: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same pairs as probes: an update is a same-subject change; a fact of another subject before the current
    one is a different subject; a fact after the current one must leave it current. Each with its agents and scopes."""
    return [
        _probe(story["id"], older, newer, PROBE_KINDS[why])
        for story in stories
        for older, newer, why in _labelled_pairs(story)
    ]


def _labelled_pairs(story: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any], str]]:
    """(older fact, newer fact, why) for one story: the first label given to a pair holds; a day apart at least."""
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
                candidates = [(fact, current, UPDATE)]
            elif "about" in subject and not subjects_of.get(fact["id"], set()) & subjects_of[current["id"]]:
                # Without its "about" list (the shared dev stories) a subject's other facts are unknown.
                candidates = [(fact, current, OTHER_SUBJECT)]
            else:
                candidates = []
            candidates.append((current, fact, LATER))
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


def _probe(story_id: str, older: dict[str, Any], newer: dict[str, Any], kind: str) -> dict[str, Any]:
    return {
        "id": f"{story_id}-{older['id']}-{newer['id']}",
        "kind": kind,
        "a": older["text"],
        "b": newer["text"],
        "a_time": older["at"],
        "b_time": newer["at"],
        "a_agent": older.get("agent", ""),
        "b_agent": newer.get("agent", ""),
        "a_scope": older.get("scope", ""),
        "b_scope": newer.get("scope", ""),
    }
