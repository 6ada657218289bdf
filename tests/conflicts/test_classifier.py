from __future__ import annotations

import json
from datetime import date

import numpy as np
import pytest

from conflicts.detection.classifier import (
    WEIGHTS_PATH,
    PairInput,
    classify,
    classify_memory_pairs,
    classify_pairs,
    load_detector,
    stored_vector,
)
from conflicts.detection.verdict import Relation
from tests.factories import WorkspaceFactory, memory


def test_it_loads_the_shipped_weights_once() -> None:
    assert WEIGHTS_PATH.stat().st_size < 5_000_000
    metadata = json.loads(WEIGHTS_PATH.with_suffix(".json").read_text())
    assert metadata["labels"] == ["compatible", "contradiction", "duplicate", "update"]
    assert metadata["training_data"]["sha256"]
    assert load_detector() is load_detector()


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("A man is playing a guitar", "A man is not playing a guitar", Relation.TRUE_CONTRADICTION),
        ("We never deploy on Fridays.", "We deploy on Fridays.", Relation.TRUE_CONTRADICTION),
        (
            "The company reported a profit of $2 million in the third quarter.",
            "In the third quarter the company reported a $2 million profit.",
            Relation.DUPLICATE,
        ),
        ("Maria lives in Lisbon.", "The Berlin office opens at 9.", Relation.COMPATIBLE),
    ],
)
def test_it_classifies_obvious_pairs(a: str, b: str, expected: Relation) -> None:
    assert classify(a, b).relation == expected


def test_it_classifies_a_dated_change_as_temporal_with_the_newer_side_current() -> None:
    p = classify("The team standup is at 9:30 every morning.", "Standup moved to 10:00.", "2024-01-10", "2024-06-01")
    assert p.relation == Relation.TEMPORAL_CHANGE
    assert p.current == "b"
    assert any("moved to" in r for r in p.reasons)


def test_the_times_choose_the_newer_side() -> None:
    p = classify("Maria lives in Berlin.", "Maria lives in Lisbon.", date(2023, 1, 1), date(2021, 1, 1))
    assert p.relation == Relation.TEMPORAL_CHANGE
    assert p.current == "a"


def test_without_times_or_change_wording_there_is_no_temporal_change() -> None:
    p = classify("Maria lives in Lisbon.", "Maria lives in Berlin.")
    assert p.relation != Relation.TEMPORAL_CHANGE
    assert p.probabilities["temporal_change"] == 0.0


def test_probabilities_sum_to_one_and_name_every_relation() -> None:
    for p in classify_pairs(
        [
            PairInput("I play soccer every weekend.", "I do not like sports at all."),
            PairInput("Backups are kept for 30 days.", "Backups are kept for 90 days.", "2022-01-01", "2023-01-01"),
        ]
    ):
        assert set(p.probabilities) == {"temporal_change", "true_contradiction", "duplicate", "compatible"}
        assert sum(p.probabilities.values()) == pytest.approx(1.0, abs=1e-6)
        assert p.probability == max(p.probabilities.values())


def test_it_is_deterministic_and_accepts_precomputed_embeddings() -> None:
    from memories.embeddings import embed_texts

    a, b = "The payment gateway timeout is 30 seconds.", "The payment gateway timeout is 10 seconds."
    first = classify(a, b)
    ua, ub = embed_texts([a, b])
    again = classify_pairs([PairInput(a, b, a_embedding=ua, b_embedding=ub)])[0]
    assert again.relation == first.relation
    assert again.probabilities == pytest.approx(first.probabilities, abs=1e-5)
    assert classify(a, b).probabilities == first.probabilities


def test_a_verdict_carries_the_evidence() -> None:
    v = classify(
        "The project runs on Python 3.11.", "The project runs on Python 3.12.", "2023-01-01", "2024-01-01"
    ).verdict()
    assert v.tier in ("classifier", "cross_encoder")  # the network, or the network and its second reading
    assert v.relation == Relation.TEMPORAL_CHANGE
    assert v.current == "b"
    assert any("versions differ" in r for r in v.reasons)
    assert v.same_subject


def test_an_empty_batch_is_fine() -> None:
    assert classify_pairs([]) == []


def test_embeddings_are_only_computed_for_missing_sides(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    class Recording:
        def embed(self, texts: list[str]) -> np.ndarray:
            seen.append(texts)
            return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)

    monkeypatch.setattr("memories.embeddings.embedder_named", lambda name: Recording())
    given = np.ones(384, dtype=np.float32) / np.sqrt(384)
    classify_pairs([PairInput("x is 1", "x is 2", a_embedding=given), PairInput("y", "x is 2", b_embedding=given)])
    assert seen == [["x is 2", "y"]]


@pytest.mark.parametrize(("probability", "same_subject"), [(0.7, False), (0.85, True)])
def test_facts_sharing_no_subject_invalidate_each_other_only_when_the_model_is_sure(
    probability: float, same_subject: bool
) -> None:
    from conflicts.detection import rules
    from conflicts.detection.classifier import Prediction

    signals = rules.analyse("Weekday support hours extended to 7am-9pm", "Weekends remain email-only")
    assert not signals.same_subject
    prediction = Prediction(Relation.TRUE_CONTRADICTION, probability, {}, None, signals)

    assert prediction.verdict().same_subject is same_subject


def test_a_verdict_says_when_the_facts_state_different_values() -> None:
    limit = "The public API rate limit is 1,000 requests per second."
    assert classify(limit, "The public API rate limit is 500 requests per second.").verdict().values_differ
    assert not classify(limit, "We cap the public API at 1,000 requests per second.").verdict().values_differ


def test_a_change_is_announced_by_the_current_side() -> None:
    from conflicts.detection import rules
    from conflicts.detection.classifier import Prediction

    signals = rules.analyse("The user lives in Porto", "The user moved from Porto to Utrecht")
    announced = Prediction(Relation.TEMPORAL_CHANGE, 0.6, {}, "b", signals)
    backwards = Prediction(Relation.TEMPORAL_CHANGE, 0.6, {}, "a", signals)

    assert (announced.verdict().announced, backwards.verdict().announced) == (True, False)


def test_a_newer_memory_leaving_what_the_older_states_is_an_announced_change() -> None:
    import datetime as dt

    from conflicts.detection.classifier import classify_memory_pairs
    from memories.models import Memory

    march, june = dt.datetime(2025, 3, 1, tzinfo=dt.UTC), dt.datetime(2025, 6, 1, tzinfo=dt.UTC)
    older = Memory(text="Unit tests: Jest 29 with the jsdom environment.", valid_from=march)
    newer = Memory(text="Moved unit tests from Jest to Vitest; the suite runs 3x faster.", valid_from=june)

    [verdict] = classify_memory_pairs([(older, newer)])

    assert (verdict.relation, verdict.current, verdict.announced, verdict.tier) == (
        Relation.TEMPORAL_CHANGE,
        "b",
        True,
        "rules",
    )
    assert 'leaves "jest"' in verdict.reasons[0]


def test_a_newer_memory_correcting_the_same_subject_replaces_it() -> None:
    import datetime as dt

    from conflicts.detection.classifier import classify_memory_pairs
    from memories.models import Memory

    at = dt.datetime(2026, 2, 9, 14, 2, tzinfo=dt.UTC)
    older = Memory(text="BM25 baseline on the 600 held-out queries: nDCG@10 = 0.412.", valid_from=at)
    newer = Memory(
        text="Correction to the previous entry: the BM25 baseline nDCG@10 is 0.418 (the first run was unstemmed).",
        valid_from=at + dt.timedelta(minutes=7),
    )
    elsewhere = Memory(text="The office wifi password rotates every month.", valid_from=at)

    [corrected, unrelated] = classify_memory_pairs([(older, newer), (elsewhere, newer)])

    assert (corrected.relation, corrected.current, corrected.announced, corrected.tier) == (
        Relation.TEMPORAL_CHANGE,
        "b",
        True,
        "rules",
    )
    assert "corrects an earlier one" in corrected.reasons[0]
    assert unrelated.relation != Relation.TEMPORAL_CHANGE


def test_a_broken_habit_is_a_contradiction_about_the_same_subject_whatever_the_model_says() -> None:
    pair = PairInput(
        "User doesn't have a driving licence (never passed the test); gets around by train and bike.",
        "User drives to the Reading office Mon/Wed/Thu; leave-home reminder at 07:45.",
        date(2025, 2, 11),
        date(2025, 9, 18),
    )

    (prediction,) = classify_pairs([pair])
    verdict = prediction.verdict()

    assert verdict.relation == Relation.TRUE_CONTRADICTION
    assert verdict.probability == pytest.approx(0.9)
    assert verdict.same_subject
    assert sum(prediction.probabilities.values()) == pytest.approx(1.0)


# --- the classifier reads only vectors of the model it was trained on -----------------


def test_a_stored_vector_is_used_only_when_the_classifier_s_own_model_made_it() -> None:
    vector = np.full(384, 1 / np.sqrt(384), dtype=np.float32)
    trained_on = load_detector().embedder

    assert stored_vector(vector, trained_on) is not None
    assert stored_vector(vector, "text-embedding-3-small-384") is None
    assert stored_vector(None, trained_on) is None


@pytest.mark.django_db
def test_memories_embedded_by_another_model_are_classified_from_their_text() -> None:
    # With MEMORYHUB_EMBEDDER=openai the stored vectors live in OpenAI's space; fed to a
    # classifier trained on MiniLM they would be noise. Here they are noise on purpose.
    workspace = WorkspaceFactory()
    noise = np.random.default_rng(3).standard_normal(384).astype(np.float32)
    older, newer = (
        memory(workspace=workspace, text=text, status="active", embedding=noise, embedding_model="remote-model")
        for text in ("We never deploy on Fridays.", "We deploy on Fridays.")
    )

    (verdict,) = classify_memory_pairs([(older, newer)])

    from_text = classify(older.text, newer.text)
    assert verdict.relation == from_text.relation == Relation.TRUE_CONTRADICTION
    assert verdict.probability == pytest.approx(from_text.probability, abs=1e-6)


def test_memories_true_from_within_a_day_of_each_other_carry_no_times_whichever_came_first() -> None:
    import datetime as dt

    from conflicts.detection.classifier import classify_memory_pairs
    from memories.models import Memory

    # The "older" fact of the pair became true 40 µs after the newer one: still the same moment.
    # (A timedelta of −40 µs has .days == −1; comparing |.days| < 1 passed the times on.)
    noon = dt.datetime(2025, 6, 1, 12, tzinfo=dt.UTC)
    older = Memory(text="The public API rate limit is 1,000 requests per second.", valid_from=noon)
    newer = Memory(
        text="The public API rate limit is 2,000 requests per second.", valid_from=noon - dt.timedelta(microseconds=40)
    )

    [verdict] = classify_memory_pairs([(older, newer)])

    # No time passed and nothing says it changed: two values at once, not an update.
    assert verdict.relation != Relation.TEMPORAL_CHANGE
    assert not any("valid from" in reason for reason in verdict.reasons)
