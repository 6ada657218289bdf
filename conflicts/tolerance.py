"""The workspace's uncertainty tolerance and what it decides.

Tolerance (0.2–0.8, baseline 0.5) self-tunes from review behaviour (the review
dashboard nudges it). Here it sets how sure the detector must be before a
temporal change is resolved silently instead of asked about: a tolerant
workspace (people dismiss cards) auto-resolves more; a workspace whose people
keep correcting the hub asks more.
"""

from __future__ import annotations

from django.db import transaction

from conflicts.models import Tolerance, ToleranceChange
from memories.audit import Actor, Tracker, record_event
from memoryhub.errors import InvalidInput
from workspaces.models import Workspace


def tolerance_value(workspace: Workspace) -> float:
    tolerance, _ = Tolerance.objects.get_or_create(workspace=workspace)
    return tolerance.value


def auto_resolve_threshold(tolerance: float) -> float:
    """Probability a temporal change needs to be applied without asking.

    0.85 at the baseline, 0.70 at the most tolerant, 1.0 (never) at the least.
    """
    return min(1.0, 0.85 - 0.5 * (tolerance - Tolerance.BASELINE))


def announced_resolve_threshold(tolerance: float) -> float:
    """The same, for a change the newer fact announces itself ("moved to", "switched to").

    Wording that says "this replaces that" is strong evidence on its own, so the
    bar is 0.35 lower: 0.50 at the baseline.
    """
    return auto_resolve_threshold(tolerance) - 0.35


def surface_threshold(tolerance: float) -> float:
    """Probability a disagreement needs to become a conflict card for people to answer.

    Below it, the disagreement is kept as an open uncertainty (recall flags it,
    agents can surface it in conversation) but nobody is asked. 0.75 at the
    baseline; a tolerant workspace (0.8) asks only above 0.90, an eager one
    (0.2) from 0.60.
    """
    return 0.75 + 0.5 * (tolerance - Tolerance.BASELINE)


# How one review answer moves the workspace's tolerance. A correction means the
# hub decided too eagerly (ask more, resolve less); a confirmation or a dismissal
# means the hub asked about something it could have settled or left alone.
NUDGES = {"no": -0.03, "yes": 0.01, "both": 0.02, "skip": 0.01}


def tolerance_nudge(tracker: Tracker, *, workspace: Workspace, answer: str) -> ToleranceChange:
    """Move tolerance by the answer's nudge, clamped to 0.2–0.8, and write a history row.

    Recorded on ``tracker`` (the Tolerance update and the ToleranceChange row) so
    the answer's event holds it and an undo puts the value back. Call inside
    the answer's transaction: the row lock serialises concurrent nudges.
    """
    tolerance = Tolerance.objects.select_for_update().filter(workspace=workspace).first()
    if tolerance is None:
        Tolerance.objects.get_or_create(workspace=workspace)
        tolerance = Tolerance.objects.select_for_update().get(workspace=workspace)
    value = round(min(Tolerance.MAXIMUM, max(Tolerance.MINIMUM, tolerance.value + NUDGES[answer])), 4)
    delta = round(value - tolerance.value, 4)
    tracker.update(tolerance, value=value)
    tolerance.save()
    change = ToleranceChange.objects.create(workspace=workspace, value=value, delta=delta, reason=f"answer:{answer}")
    tracker.created(change, ["value", "delta", "reason"])
    return change


def tolerance_set(*, workspace: Workspace, value: float, actor: Actor) -> ToleranceChange:
    """An admin sets the tolerance by hand (a history row and an undoable event, like any change)."""
    if not Tolerance.MINIMUM <= value <= Tolerance.MAXIMUM:
        raise InvalidInput(f"tolerance must be between {Tolerance.MINIMUM} and {Tolerance.MAXIMUM}", field="tolerance")
    with transaction.atomic():
        Tolerance.objects.get_or_create(workspace=workspace)
        tolerance = Tolerance.objects.select_for_update().get(workspace=workspace)
        tracker = Tracker()
        delta = round(value - tolerance.value, 4)
        tracker.update(tolerance, value=round(value, 4))
        tolerance.save()
        change = ToleranceChange.objects.create(workspace=workspace, value=value, delta=delta, reason="admin:set")
        tracker.created(change, ["value", "delta", "reason"])
        record_event(workspace=workspace, actor=actor, verb="tolerance.set", changes=tracker.changes)
    return change
