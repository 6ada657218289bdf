from __future__ import annotations

import datetime as dt

import pytest

from conflicts.forgetting import ForgettingRates, StoryFact, sample, survival_rate

NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)


def facts(count: int, age: dt.timedelta, conflicts: int = 0, prefix: str = "f") -> list[StoryFact]:
    return [
        StoryFact(id=f"{prefix}{n}", text="", scope="", agent="", at=NOW - age, conflict_count=conflicts)
        for n in range(count)
    ]


@pytest.mark.parametrize(
    ("age", "low", "high"),
    [
        (dt.timedelta(hours=1), 0.20, 0.40),
        (dt.timedelta(hours=23), 0.20, 0.40),
        (dt.timedelta(days=3), 0.10, 0.20),
        (dt.timedelta(days=30), 0.05, 0.10),
        (dt.timedelta(days=900), 0.05, 0.10),
    ],
)
def test_survival_rates_stay_in_their_age_band(age: dt.timedelta, low: float, high: float) -> None:
    assert low <= survival_rate(age, 0) <= high


@pytest.mark.parametrize(
    ("age", "low", "high"),
    [(dt.timedelta(hours=6), 0.20, 0.40), (dt.timedelta(days=4), 0.10, 0.20), (dt.timedelta(days=60), 0.05, 0.10)],
)
def test_sampled_survival_matches_the_band_over_many_seeded_draws(age: dt.timedelta, low: float, high: float) -> None:
    population = facts(500, age)
    kept = [len(sample(population, now=NOW, seed=seed)) / len(population) for seed in range(40)]

    assert low - 0.02 <= sum(kept) / len(kept) <= high + 0.02


def test_each_conflict_flag_doubles_the_survival_rate() -> None:
    age = dt.timedelta(days=60)

    assert survival_rate(age, 1) == pytest.approx(2 * survival_rate(age, 0))
    assert survival_rate(age, 2) == pytest.approx(4 * survival_rate(age, 0))
    assert survival_rate(age, 20) == 1.0

    plain = facts(400, age, prefix="p")
    flagged = facts(400, age, conflicts=1, prefix="c")
    kept = sample(plain + flagged, now=NOW, seed="boost")
    kept_flagged = sum(1 for f in kept if str(f.id).startswith("c"))
    kept_plain = len(kept) - kept_flagged
    assert kept_flagged > 1.5 * kept_plain


def test_the_trigger_fact_always_survives() -> None:
    population = facts(200, dt.timedelta(days=400))
    for seed in range(30):
        assert "f17" in {f.id for f in sample(population, now=NOW, seed=seed, trigger_id="f17")}


def test_a_seeded_run_is_reproducible_and_oldest_first() -> None:
    population = [
        StoryFact(id=f"f{n}", text="", scope="", agent="", at=NOW - dt.timedelta(hours=n * 7)) for n in range(300)
    ]

    first = sample(population, now=NOW, seed=42)
    assert first == sample(population, now=NOW, seed=42)
    assert first != sample(population, now=NOW, seed=43)
    assert [f.at for f in first] == sorted(f.at for f in first)


def test_rates_are_settings(settings: object) -> None:
    settings.MEMORYHUB_FORGETTING_RATES = {"older": [0.5, 0.5]}  # type: ignore[attr-defined]

    rates = ForgettingRates.from_settings()

    assert survival_rate(dt.timedelta(days=30), 0, rates) == 0.5
    assert rates.first_day == (0.40, 0.20)
