"""The seeds' upkeep formulas as pure functions, each reading its constants from settings.

docs/UPKEEP.md states them with the seeds' numbers; tests/conflicts/test_upkeep_formulas.py
checks each against values worked out by hand.
"""

from __future__ import annotations

import datetime as dt
import math

from django.conf import settings

from memories.models import Memory

DAY = 86_400.0


def multiplier(reliability: str) -> float:
    """Seed 000: reliable 1.0×, uncertain 1.5×, contradicted 2.0×, superseded 3.0×."""
    return float(settings.MEMORYHUB_DECAY_MULTIPLIERS[reliability])


def decay_rate(reliability: str) -> float:
    """Confidence lost per day, as the exponent's coefficient: 0.01 × the reliability's multiplier."""
    return float(settings.MEMORYHUB_CONFIDENCE_DECAY_RATE) * multiplier(reliability)


def time_decay(evidence_confidence: float, days: float, reliability: str) -> float:
    """Seed 002's time decay with seed 000's multiplier: c · exp(−0.01 · m · days since evidence)."""
    return evidence_confidence * math.exp(-decay_rate(reliability) * max(days, 0.0))


def evidence_step(confidence: float) -> float:
    """Seed 002's evidence accumulation: one supporting fact closes 5 % of the gap to 1."""
    return confidence + float(settings.MEMORYHUB_EVIDENCE_RATE) * (1.0 - confidence)


def contradiction_penalty(confidence: float) -> float:
    """Seed 002: both sides of a clear contradiction lose 50 % of their confidence."""
    return confidence * float(settings.MEMORYHUB_CONTRADICTION_PENALTY)


def thresholds() -> list[float]:
    """Where a falling confidence changes what the fact is: passive context, deprecation, retirement."""
    return sorted(
        {
            float(settings.MEMORYHUB_CONFIDENCE_PASSIVE),
            float(settings.MEMORYHUB_CONFIDENCE_DEPRECATE),
            float(settings.MEMORYHUB_DECAY_FLOOR),
        },
        reverse=True,
    )


def band(confidence: float) -> str:
    """Seed 002's participation: < floor retired (decayed), < 0.3 deprecated, 0.3–0.5 search only, else streamed."""
    if confidence < settings.MEMORYHUB_DECAY_FLOOR:
        return "decayed"
    if confidence < settings.MEMORYHUB_CONFIDENCE_DEPRECATE:
        return "deprecated"
    if confidence <= settings.MEMORYHUB_CONFIDENCE_PASSIVE:
        return "search"
    return "passive"


def evidence_of(memory: Memory) -> tuple[float, dt.datetime]:
    """The confidence the evidence supports and when the last evidence came."""
    confidence = memory.evidence_confidence if memory.evidence_confidence is not None else memory.confidence
    at = memory.evidence_at or memory.last_reinforced_at or memory.recorded_at
    return confidence, at


def confidence_now(memory: Memory, now: dt.datetime, *, since: dt.datetime | None = None) -> float:
    """``memory``'s confidence at ``now``; ``since`` overrides when its last evidence came."""
    anchor, at = evidence_of(memory)
    if since is not None and since > at:
        at = since
    return time_decay(anchor, (now - at).total_seconds() / DAY, memory.reliability)


def next_due(memory: Memory, confidence: float, now: dt.datetime, *, since: dt.datetime | None = None) -> dt.datetime:
    """When the stored ``confidence`` next needs rewriting: a write step lower, or the next threshold down."""
    anchor, at = evidence_of(memory)
    if since is not None and since > at:
        at = since
    step = float(settings.MEMORYHUB_DECAY_WRITE_STEP)
    below = [t for t in thresholds() if t < confidence]
    target = max([confidence - step, *below])
    rate = decay_rate(memory.reliability)
    if target <= 0 or anchor <= 0 or rate <= 0:
        return now + dt.timedelta(days=365)
    # c(t) = anchor · exp(−rate · t) reaches target (a hair below, so the crossing has happened) at t days.
    days = math.log(anchor / (target * (1 - 1e-9))) / rate
    due = at + dt.timedelta(days=days)
    return max(due, now + dt.timedelta(minutes=1))
