"""The seeds' upkeep formulas, checked against values worked out by hand (docs/UPKEEP.md)."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from conflicts.upkeep import formulas
from conflicts.upkeep.drift import budget
from memories.models import Memory

NOW = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("reliability", "expected"),
    [("reliable", 1.0), ("uncertain", 1.5), ("contradicted", 2.0), ("superseded", 3.0)],
)
def test_the_decay_multipliers_are_seed_000s(reliability: str, expected: float) -> None:
    assert formulas.multiplier(reliability) == expected
    assert formulas.decay_rate(reliability) == pytest.approx(0.01 * expected)


def test_time_decay_is_c_times_exp_minus_one_percent_a_day() -> None:
    # Seed 002: "~10 % decay per 10 days".
    assert formulas.time_decay(0.9, 10, "reliable") == pytest.approx(0.9 * math.exp(-0.1))
    assert formulas.time_decay(0.9, 10, "reliable") == pytest.approx(0.814354, abs=1e-6)
    assert formulas.time_decay(0.9, 200, "reliable") == pytest.approx(0.121802, abs=1e-6)
    # Unverified facts fade 1.5× as fast, contradicted 2×, superseded 3×.
    assert formulas.time_decay(0.6, 100, "uncertain") == pytest.approx(0.6 * math.exp(-1.5))
    assert formulas.time_decay(0.9, 50, "contradicted") == pytest.approx(0.9 * math.exp(-1.0))
    assert formulas.time_decay(0.9, 10, "superseded") == pytest.approx(0.9 * math.exp(-0.3))
    # Evidence from the future (clock skew) does not raise confidence.
    assert formulas.time_decay(0.9, -5, "reliable") == 0.9


def test_evidence_closes_five_percent_of_the_gap() -> None:
    assert formulas.evidence_step(0.6) == pytest.approx(0.62)
    assert formulas.evidence_step(0.9) == pytest.approx(0.905)
    c = 0.5
    for _ in range(100):
        c = formulas.evidence_step(c)
    assert c < 1.0  # asymptotic: many weak signals never reach certainty
    assert c == pytest.approx(1 - 0.5 * 0.95**100)


def test_a_clear_contradiction_halves_confidence() -> None:
    assert formulas.contradiction_penalty(0.9) == pytest.approx(0.45)
    assert formulas.contradiction_penalty(0.6) == pytest.approx(0.3)


@pytest.mark.parametrize(
    ("confidence", "band"),
    [(0.95, "passive"), (0.51, "passive"), (0.5, "search"), (0.3, "search"), (0.29, "deprecated"), (0.09, "decayed")],
)
def test_the_thresholds_are_seed_002s(confidence: float, band: str) -> None:
    # < 0.3 deprecated, 0.3–0.5 explicit search only, > 0.5 streamed; below the floor (0.1) retired.
    assert formulas.band(confidence) == band


def test_the_stored_confidence_is_due_again_one_write_step_lower_or_at_the_next_threshold() -> None:
    fact = Memory(confidence=0.9, evidence_confidence=0.9, evidence_at=NOW, reliability="reliable", recorded_at=NOW)
    # 0.9 → 0.88 (a step of 0.02) takes ln(0.9/0.88)/0.01 days.
    due = formulas.next_due(fact, 0.9, NOW)
    assert (due - NOW).total_seconds() / 86_400 == pytest.approx(math.log(0.9 / 0.88) / 0.01, rel=1e-6)
    # Just above 0.5, the next write is the crossing of 0.5 (out of passive context), not a full step.
    due = formulas.next_due(fact, 0.505, NOW)
    assert (due - NOW).total_seconds() / 86_400 == pytest.approx(math.log(0.9 / 0.5) / 0.01, rel=1e-6)


def test_the_drift_budget_follows_tolerance() -> None:
    # Seed 000: 10–20 facts a cycle; a workspace that tolerates little uncertainty checks more.
    assert budget(0.8) == 10
    assert budget(0.2) == 20
    assert budget(0.5) == 15
