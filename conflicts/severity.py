"""A card's severity: what is at stake, capped by how often its detector is right.

The stakes come from the kinds of the facts (``reliability.severity_for``: a
belief about a person is critical, two episodes low). A card is only as urgent
as it is likely to be a real conflict, so the stakes are capped by the card's
*expected precision*: the lower of

- the detector's measured precision — the workspace's own once reviewers have
  given it :data:`WORKSPACE_ANSWERS` deciding answers ("both are true" counts
  as a false positive, as on the Insights page), else the offline figure below;
- the verdict's own probability, when the detector gives one (the pairwise
  tiers do; the narrative detective quotes the pair's as ``p=0.62``).

| expected precision | severity at most |
|---|---|
| ≥ 0.90 | the stakes |
| ≥ 0.70 | high |
| ≥ 0.50 | medium |
| below  | low |

The offline figures and where they come from are in docs/DETECTION.md
("Severity of a card").
"""

from __future__ import annotations

import re

from django.db.models import Count, Q

from conflicts.models import SEVERITY_RANK, Answer, AnswerChoice, Severity

# Held-out precision of the shipped pairwise detector by what it predicted
# (docs/DETECTION.md, held-out confusion over 13,407 pairs): 1,082 of 1,503
# predicted contradictions and 568 of 648 predicted changes were right.
PAIRWISE_PRECISION = {"true_contradiction": 0.72, "temporal_change": 0.88}
# The offline narrative detective: 11 of 11 flags right on the dev stories,
# smoothed as (11 + 1) / (11 + 2); its rules were written on those stories.
NARRATIVE_OFFLINE_PRECISION = 0.92
# Not measured (no endpoint was reachable): assume a coin toss until reviewers answer.
UNMEASURED_PRECISION = 0.5
WORKSPACE_ANSWERS = 10
CAPS = [(0.9, Severity.CRITICAL), (0.7, Severity.HIGH), (0.5, Severity.MEDIUM)]
_QUOTED_P = re.compile(r"\bp=([01](?:\.\d+)?)")


def offline_precision(*, detector: str, evidence: dict[str, object]) -> float:
    """The detector's precision measured offline (see the module docstring)."""
    if detector.startswith("narrative:"):
        return NARRATIVE_OFFLINE_PRECISION if detector.endswith(":offline") else UNMEASURED_PRECISION
    relation = str(evidence.get("relation", ""))
    return PAIRWISE_PRECISION.get(relation, UNMEASURED_PRECISION)


def workspace_precision(*, workspace_id: int, detector: str) -> float | None:
    """Reviewers' precision for the detector in this workspace, once they answered enough of its cards."""
    row = (
        Answer.objects.filter(card__workspace_id=workspace_id, card__detector=detector)
        .exclude(choice=AnswerChoice.SKIP)
        .aggregate(total=Count("id"), false_positives=Count("id", filter=Q(choice=AnswerChoice.BOTH)))
    )
    total = int(row["total"] or 0)
    if total < WORKSPACE_ANSWERS:
        return None
    return (total - int(row["false_positives"] or 0) + 1) / (total + 2)


def verdict_probability(evidence: dict[str, object]) -> float | None:
    value = evidence.get("probability")
    if isinstance(value, int | float):
        return float(value)
    quoted = _QUOTED_P.search(str(evidence.get("reason", "")))
    return float(quoted.group(1)) if quoted else None


def expected_precision(*, workspace_id: int, detector: str, evidence: dict[str, object]) -> float:
    measured = workspace_precision(workspace_id=workspace_id, detector=detector)
    precision = measured if measured is not None else offline_precision(detector=detector, evidence=evidence)
    probability = verdict_probability(evidence)
    return min(precision, probability) if probability is not None else precision


def severity_cap(precision: float) -> Severity:
    for floor, cap in CAPS:
        if precision >= floor:
            return cap
    return Severity.LOW


def severity_calibrated(*, stakes: Severity, workspace_id: int, detector: str, evidence: dict[str, object]) -> Severity:
    cap = severity_cap(expected_precision(workspace_id=workspace_id, detector=detector, evidence=evidence))
    return stakes if SEVERITY_RANK[stakes] <= SEVERITY_RANK[cap] else cap
