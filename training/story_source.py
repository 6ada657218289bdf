"""The project's own labelled stories: a compact hand-written source, and its frozen dev/validation split.

The stories in ``training/data/stories-own.txt`` are written by hand in a
terse notation that is quicker to write and review than JSON, and turned into
the shared story format (``shared/eval/README.md``) by :func:`parse_source`.
One story::

    == h012 health
    f1 2025-09-03 physio-bot rehab | No running for two weeks after the ankle sprain.
    f2 2025-09-05 14:30 pa-chat exercise | User is swimming instead of running for now.
    cur Exercise routine | f2 clear | f1 f2
    flag stale f1 f4 | the note was never retired
    trap f1 f2 | consistent: swimming is what replaces running

- ``fN DATE [HH:MM] AGENT SCOPE | text``: a fact. Without a time, facts of one
  day are spaced a few minutes apart in the order written.
- ``cur SUBJECT | FACT clear|unclear [| FACT …]``: a current-truth subject. The
  optional third part lists every fact *about* that subject (the current one
  included); it is stored as ``about`` and lets the evaluation tell an
  automatic supersede or merge within one subject from one across subjects.
  A fact may be about two subjects ("Farah moved to Search; Billing is now
  owned by Lucia").
- ``flag KIND FACT … | note`` and ``trap FACT … | why``: expected flags and
  must-not-flag pairs.

:func:`split` shuffles the stories with a fixed seed and cuts them into dev and
validation. The validation file is frozen: its sha256 is in
``docs/DETECTION.md`` and no rule is tuned against it.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any

KINDS = ("reversal", "ambiguity", "stale", "contradiction")
SPLIT_SEED = 20261125
VALIDATION_SHARE = 1 / 3

_FACT = re.compile(r"^(f\d+)\s+(\d{4}-\d\d-\d\d)(?:\s+(\d\d:\d\d))?\s+(\S+)\s+(\S+)\s*\|\s*(.+)$")


class SourceError(ValueError):
    pass


def parse_source(text: str) -> list[dict[str, Any]]:
    """Every story in the notation above, in the shared JSON shape, checked for dangling fact ids."""
    stories: list[dict[str, Any]] = []
    story: dict[str, Any] | None = None
    minutes_into_day: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            if line.startswith("=="):
                story_id, domain = line[2:].split()
                story = {
                    "id": story_id,
                    "domain": domain,
                    "facts": [],
                    "expected_flags": [],
                    "current": [],
                    "must_not_flag": [],
                }
                stories.append(story)
                minutes_into_day = {}
                continue
            if story is None:
                raise SourceError("a line before the first story")
            _parse_line(story, line, minutes_into_day)
        except (SourceError, ValueError) as exc:
            raise SourceError(f"line {number}: {exc}: {line!r}") from exc
    for parsed in stories:
        _check(parsed)
    ids = [s["id"] for s in stories]
    if len(ids) != len(set(ids)):
        raise SourceError("story ids repeat")
    return stories


def _parse_line(story: dict[str, Any], line: str, minutes_into_day: dict[str, int]) -> None:
    fact = _FACT.match(line)
    if fact:
        fact_id, day, time, agent, scope, text = fact.groups()
        if time is None:
            # Facts of one day without a time keep the order written, a few minutes apart.
            minutes = minutes_into_day.get(day, 9 * 60 - 7) + 7
            minutes_into_day[day] = minutes
            time = f"{minutes // 60:02d}:{minutes % 60:02d}"
        at = dt.datetime.fromisoformat(f"{day}T{time}:00")
        story["facts"].append(
            {"id": fact_id, "text": text.strip(), "scope": scope, "agent": agent, "at": at.isoformat() + "Z"}
        )
        return
    head, _, rest = line.partition(" ")
    parts = [p.strip() for p in rest.split("|")]
    if head == "cur":
        if len(parts) not in (2, 3):
            raise SourceError("cur SUBJECT | FACT STATUS [| FACTS]")
        fact_id, status = parts[1].split()
        if status not in ("clear", "unclear"):
            raise SourceError(f"status {status}")
        item: dict[str, Any] = {"subject": parts[0], "fact_id": fact_id, "status": status}
        if len(parts) == 3:
            about = parts[2].split()
            if fact_id not in about:
                about.append(fact_id)
            item["about"] = about
        story["current"].append(item)
    elif head == "flag":
        kind, *fact_ids = parts[0].split()
        if kind not in KINDS or len(fact_ids) < 2 or len(parts) != 2:
            raise SourceError("flag KIND FACT FACT … | note")
        story["expected_flags"].append({"kind": kind, "fact_ids": fact_ids, "note": parts[1]})
    elif head == "trap":
        fact_ids = parts[0].split()
        if len(fact_ids) < 2 or len(parts) != 2:
            raise SourceError("trap FACT FACT … | why")
        story["must_not_flag"].append({"fact_ids": fact_ids, "why": parts[1]})
    else:
        raise SourceError("not a fact, cur, flag or trap line")


def _check(story: dict[str, Any]) -> None:
    known = {f["id"] for f in story["facts"]}
    if len(known) != len(story["facts"]):
        raise SourceError(f"{story['id']}: fact ids repeat")
    used = [c["fact_id"] for c in story["current"]]
    used += [i for c in story["current"] for i in c.get("about", [])]
    used += [i for f in story["expected_flags"] for i in f["fact_ids"]]
    used += [i for t in story["must_not_flag"] for i in t["fact_ids"]]
    dangling = sorted(set(used) - known)
    if dangling:
        raise SourceError(f"{story['id']}: unknown facts {dangling}")
    if not story["current"]:
        raise SourceError(f"{story['id']}: no current-truth subject")
    subjects = [c["subject"] for c in story["current"]]
    if len(subjects) != len(set(subjects)):
        raise SourceError(f"{story['id']}: subjects repeat")


def split(stories: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(dev, validation): a seeded shuffle, a third to validation, each part back in id order."""
    order = sorted(stories, key=lambda s: s["id"])
    random.Random(SPLIT_SEED).shuffle(order)
    cut = round(len(order) * VALIDATION_SHARE)
    validation, dev = order[:cut], order[cut:]
    return sorted(dev, key=lambda s: s["id"]), sorted(validation, key=lambda s: s["id"])


PROBE_KINDS = {"same": "same_subject_change", "diff": "different_subject"}


def parse_probes(text: str) -> list[dict[str, Any]]:
    """Probe pairs written ``same|diff | a_time | b_time | a | b``, one a line, ids ``p01``… in order written."""
    probes: list[dict[str, Any]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 5 or parts[0] not in PROBE_KINDS:
            raise SourceError(f"line {number}: not KIND | a_time | b_time | a | b: {line!r}")
        kind, a_time, b_time, a, b = parts
        if dt.date.fromisoformat(a_time) > dt.date.fromisoformat(b_time):
            raise SourceError(f"line {number}: a_time after b_time")
        probes.append(
            {
                "id": f"p{len(probes) + 1:02d}",
                "kind": PROBE_KINDS[kind],
                "a": a,
                "b": b,
                "a_time": f"{a_time}T09:00:00Z",
                "b_time": f"{b_time}T09:00:00Z" if b_time != a_time else f"{b_time}T09:30:00Z",
            }
        )
    return probes


def split_probes(probes: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(dev, validation): each kind shuffled with the fixed seed and halved, each part back in id order."""
    dev: list[dict[str, Any]] = []
    validation: list[dict[str, Any]] = []
    for kind in sorted(PROBE_KINDS.values()):
        of_kind = [p for p in probes if p["kind"] == kind]
        random.Random(SPLIT_SEED).shuffle(of_kind)
        half = len(of_kind) // 2
        validation += of_kind[:half]
        dev += of_kind[half:]
    return sorted(dev, key=lambda p: p["id"]), sorted(validation, key=lambda p: p["id"])
