"""Memory upkeep on Celery beat: decay, confidence, consolidation, drift, solo uncertainties.

docs/UPKEEP.md states the formulas, the schedule and the settings. Each job is a
function of a :class:`~conflicts.upkeep.runs.Cycle`, run and recorded by
:func:`~conflicts.upkeep.runs.job_execute`.
"""

from __future__ import annotations

from conflicts.upkeep.confidence import run_confidence
from conflicts.upkeep.consolidation import run_consolidation
from conflicts.upkeep.decay import run_decay
from conflicts.upkeep.drift import run_drift
from conflicts.upkeep.runs import JobFunction
from conflicts.upkeep.unverified import run_unverified

JOBS: dict[str, JobFunction] = {
    "decay": run_decay,
    "confidence": run_confidence,
    "consolidation": run_consolidation,
    "drift": run_drift,
    "unverified": run_unverified,
}

# The Jobs page's words for each job, the detective's included.
LABELS = {
    "decay": "Decay (hourly)",
    "confidence": "Confidence upkeep (nightly)",
    "consolidation": "Consolidation (nightly)",
    "drift": "Drift reconcile (every 15 min)",
    "unverified": "Unverified and stale facts (nightly)",
    "detective": "Narrative detective",
}
