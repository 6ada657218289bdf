"""Slot pairs: hand-written pairs of facts that teach what one subject's change looks like in other words.

The public pairs teach updates only in one shape — the same question with
another answer (SituatedQA: "… world cup? 1990." / "… world cup? 2018."). Facts
agents write change in other words: "The user lives in Porto." → "User
relocated to Rotterdam at the end of March."; "Paging goes through PagerDuty."
→ "We moved paging from PagerDuty to Opsgenie." And facts that share words
are often about different things: "Acme has 200 seats on the Pro plan." /
"The Pro plan costs 59 euros per seat." The files in ``data/slot-pairs/``
(written by hand for this project on 2026-11-26: six domains, a file of other
voices and one of restatements) hold both kinds, one pair a line::

    LABEL | older fact | newer fact

- ``update``: the newer fact gives a new value for the older fact's slot —
  the same entity and attribute — whatever its words;
- ``duplicate``: the same slot and value said again ("still", "remains",
  the figure written another way);
- ``contradiction``: the same slot, two values, both stated as current at
  about the same time (no dates: dates alone make no update);
- ``compatible``: a different slot that shares words, another aspect of the
  same entity, or an addition ("also").

Dates come from a fixed seed: an update and a compatible pair are 7–240
days apart (every update, 60 % of compatible pairs dated), a duplicate half
the time. A third of the pairs, chosen by a hash of their two texts, is the
frozen validation split (``manage.py build_stories`` writes both as JSON
Lines in the pairs format; docs/DETECTION.md holds the validation file's
sha256). Train on ``slot-pairs-train.jsonl`` (``train_detector --slots``);
the validation file says how a pair model does on slot pairs it never saw.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from typing import Any

from conflicts.detection.network import LABELS

SOURCE = "slots"
SEED = 20261126
VALIDATION_SHARE = 1 / 3
_START = dt.date(2024, 1, 1)


class SlotPairError(ValueError):
    pass


def is_validation(a: str, b: str) -> bool:
    """The frozen split: a pair's place is a function of its two texts only."""
    digest = hashlib.sha256(f"{a}\n{b}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < VALIDATION_SHARE


def parse_slot_pairs(sources: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """``(name, text)`` sources → pairs-format rows (``id``, ``a``, ``b``, ``label``, ``source``, times), in order.

    Raises :class:`SlotPairError` naming the source and line of a malformed pair or a pair written twice.
    """
    rng = random.Random(SEED)
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for name, text in sources:
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ")]
            if len(parts) != 3 or parts[0] not in LABELS or not all(parts):
                raise SlotPairError(f"{name}, line {number}: expected 'LABEL | older | newer', got {line!r}")
            label, a, b = parts
            if (a, b) in seen:
                raise SlotPairError(f"{name}, line {number}: the pair is written twice")
            seen.add((a, b))
            a_time, b_time = _dates(label, rng)
            row: dict[str, Any] = {"id": f"slots-{name}-{number}", "a": a, "b": b, "label": label, "source": SOURCE}
            if a_time and b_time:
                row["a_time"], row["b_time"] = a_time, b_time
            rows.append(row)
    return rows


def split_slot_pairs(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, validation), each in source order."""
    validation = [r for r in rows if is_validation(r["a"], r["b"])]
    train = [r for r in rows if not is_validation(r["a"], r["b"])]
    return train, validation


def _dates(label: str, rng: random.Random) -> tuple[str | None, str | None]:
    # Drawn for every pair, used or not, so one pair's dates never depend on another's label.
    start = _START + dt.timedelta(days=rng.randrange(0, 700))
    end = start + dt.timedelta(days=rng.randrange(7, 241))
    dated = {"update": True, "compatible": rng.random() < 0.6, "duplicate": rng.random() < 0.5}.get(label, False)
    return (start.isoformat(), end.isoformat()) if dated else (None, None)


# A probe battery's kinds as the slot reader's labels: a change of one subject is an update; two subjects that
# share words — most of them one entity's other property, with words of change ("The user's car is a Golf." /
# "The user's car insurance switched to Direct Line.") — are compatible.
PROBE_LABELS = {"same_subject_change": "update", "different_subject": "compatible"}
# The dev probe batteries the slot reader's training file adds to the slot pairs (``build_stories``): the
# changes, the pairs of one thing's other property, and the plain changes phrased every way (written
# 2026-11-29 so that a reader taught the properties keeps "Jenkins was replaced by GitHub Actions").
SLOT_READER_BATTERIES = ("probes-changes.jsonl", "probes-harmless.jsonl", "probes-plain-changes.jsonl")


def probes_as_slot_pairs(probes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Probe pairs (``training/probes.py``'s format) → pairs-format rows for the slot reader to learn from.

    The slot reader reads which *thing* a fact is about well and which of its properties changed badly: the
    hand-written batteries hold hundreds of pairs of one thing's two properties, the hard cases it needs.
    """
    return [
        {
            "id": f"probe-{probe['id']}",
            "a": probe["a"],
            "b": probe["b"],
            "label": PROBE_LABELS[probe["kind"]],
            "source": SOURCE,
            "a_time": probe["a_time"][:10],
            "b_time": probe["b_time"][:10],
        }
        for probe in probes
    ]
