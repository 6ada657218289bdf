"""Probe pairs through the whole offline pipeline: does a change of one subject end superseded or carded,
and is a pair of different subjects that share words left alone?

Each pair is replayed into a throw-away workspace inside a transaction that is
rolled back: ``a`` is committed true from ``a_time``, embedded and checked as at
ingestion, then ``b`` likewise, then the narrative detective reads both. The
outcome is what happened to the pair, in this order: ``superseded`` (``b``
replaced ``a``), ``superseded_backwards`` (``a`` replaced ``b``), ``merged``,
``carded`` (a card holds the pair), ``uncertain`` (an open uncertainty nobody
is asked about), ``nothing``. A probe may name each fact's agent and scope
(``a_agent``, ``b_scope`` …; story-derived probes do), as the stories' facts have them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from conflicts.models import ConflictCard, Uncertainty, UncertaintyState
from conflicts.narrative import flag_to_card
from memories.models import Memory
from memoryhub.errors import InvalidInput
from training.stories import automatic_decisions, decision_path, eval_workspace, ingest, narrative_flags, parse_at
from workspaces.models import Workspace

# A change of one subject; two subjects that share words; a fact followed by a later one that leaves it current
# (story-derived probes only: training/story_pairs.py).
KINDS = ("same_subject_change", "different_subject", "current_kept")
OUTCOMES = ("superseded", "superseded_backwards", "merged", "carded", "uncertain", "nothing")
RETIRED = ("superseded", "superseded_backwards", "merged")


class _Rollback(Exception):
    pass


@dataclass(frozen=True)
class ProbeOutcome:
    probe_id: str
    kind: str
    outcome: str
    detail: str
    path: str = ""  # for a retirement: the reading that made it (``Verdict.rule``), or the tier


def read_probes(path: Path) -> list[dict[str, Any]]:
    probes = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            probe = json.loads(line)
            missing = [k for k in ("id", "kind", "a", "b", "a_time", "b_time") if k not in probe]
            if missing:
                raise KeyError(", ".join(missing))
            if probe["kind"] not in KINDS:
                raise KeyError(f"kind {probe['kind']!r} is not one of {', '.join(KINDS)}")
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InvalidInput(f"{path}:{number}: not a probe pair ({exc})") from exc
        probes.append(probe)
    return probes


@dataclass
class ProbeReport:
    outcomes: list[ProbeOutcome]
    seconds: float

    def as_json(self) -> dict[str, Any]:
        report: dict[str, Any] = {"pairs": len(self.outcomes)}
        for kind in KINDS:
            of_kind = [o for o in self.outcomes if o.kind == kind]
            counts: dict[str, Any] = {"n": len(of_kind)} | {
                outcome: sum(o.outcome == outcome for o in of_kind) for outcome in OUTCOMES
            }
            n = len(of_kind) or 1
            if kind == "same_subject_change":
                # The bar: a change ends superseded the right way round, or with a card.
                counts["caught"] = counts["superseded"] + counts["carded"]
                counts["caught_share"] = round(counts["caught"] / n, 4)
            else:
                # The bar: never superseded or merged; a card at most rarely. A fact that stays current: the same.
                counts["wrongly_retired"] = sum(counts[outcome] for outcome in RETIRED)
                counts["carded_share"] = round(counts["carded"] / n, 4)
            retired = [o.path for o in of_kind if o.outcome in RETIRED]
            counts["retired_by"] = {path: retired.count(path) for path in sorted(set(retired))}
            report[kind] = counts
        report["per_pair"] = [
            {"id": o.probe_id, "kind": o.kind, "outcome": o.outcome, "detail": o.detail, "path": o.path}
            for o in self.outcomes
        ]
        return report


def evaluate_probes(probes: list[dict[str, Any]]) -> ProbeReport:
    started = time.monotonic()
    outcomes = [_evaluate_one(probe) for probe in probes]
    return ProbeReport(outcomes=outcomes, seconds=time.monotonic() - started)


def _evaluate_one(probe: dict[str, Any]) -> ProbeOutcome:
    outcome: ProbeOutcome | None = None
    try:
        with transaction.atomic():
            outcome = _replay(probe)
            raise _Rollback
    except _Rollback:
        pass
    assert outcome is not None  # noqa: S101 - set before the rollback
    return outcome


def _replay(probe: dict[str, Any]) -> ProbeOutcome:
    workspace = eval_workspace(f"probe {probe['id']}")
    a, b = _commit(workspace, probe, "a"), _commit(workspace, probe, "b")
    for flag in narrative_flags(workspace, "offline"):
        flag_to_card(workspace=workspace, flag=flag)
    decisions = set(automatic_decisions(workspace))
    cards = list(ConflictCard.objects.filter(workspace=workspace, card_facts__memory=a).filter(card_facts__memory=b))
    if ("supersede", a.pk, b.pk) in decisions:
        outcome, detail = "superseded", "b replaced a"
    elif ("supersede", b.pk, a.pk) in decisions:
        outcome, detail = "superseded_backwards", "a replaced b"
    elif any(action == "merge" for action, _, _ in decisions):
        outcome, detail = "merged", "one merged into the other"
    elif cards:
        outcome, detail = "carded", ", ".join(f"{card.kind} card by {card.detector}" for card in cards)
    elif Uncertainty.objects.filter(workspace=workspace, state=UncertaintyState.OPEN).exists():
        outcome, detail = "uncertain", "an open uncertainty, no card"
    else:
        outcome, detail = "nothing", ""
    path = decision_path(a, b) if outcome in RETIRED else ""
    return ProbeOutcome(probe_id=probe["id"], kind=probe["kind"], outcome=outcome, detail=detail, path=path)


def _commit(workspace: Workspace, probe: dict[str, Any], side: str) -> Memory:
    """One side of the pair (``"a"`` or ``"b"``), true from its time, with its agent and scope where it has them."""
    return ingest(
        workspace,
        probe[side],
        at=parse_at(probe[f"{side}_time"]),
        scope=probe.get(f"{side}_scope", ""),
        agent=probe.get(f"{side}_agent", ""),
    )
