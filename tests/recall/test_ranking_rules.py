"""The ranking rules of issue 22: penalty by certainty, diversity that keeps distinct information,
recency within a subject, lexical strength from the workspace's word frequencies, questions about a month."""

from __future__ import annotations

import uuid

import pytest

from conflicts.models import Answer, ConflictCard, Uncertainty
from memories.audit import Actor
from memories.models import Memory
from memories.services import memory_supersede
from recall.hybrid import (
    Hit,
    RecallQuery,
    ScoreParts,
    _add_subject_recency,
    _diverse,
    is_subject_lookup,
    query_period,
    recall,
    workspace_bm25,
)
from tests.memories.recall_helpers import day, remember
from workspaces.models import Workspace

SAME = [1.0] + [0.0] * 383  # one vector for every hand-made fact: cosine 1 between any two


def hit(text: str, score: float = 0.7, *, key: str = "", month: int = 1, vector: list[float] = SAME) -> Hit:
    memory = Memory(text=text, key=key, confidence=0.9, valid_from=day(month), embedding=vector)
    return Hit(memory, score, ScoreParts(cosine=score), "reliable")


# ------------------------------------------------------------------------------------ penalty by certainty
def _flag(workspace: Workspace, a: Memory, b: Memory, **fields: object) -> Uncertainty:
    return Uncertainty.objects.create(
        workspace=workspace,
        memory_a=a,
        memory_a_kind="fact",
        memory_b=b,
        memory_b_kind="fact",
        uncertainty_type="contradiction",
        severity="high",
        detection_context="ingestion",
        **fields,
    )


@pytest.mark.django_db
def test_an_unreviewed_classifier_flag_costs_less_than_a_reviewed_contradiction(workspace: Workspace) -> None:
    flagged = remember(workspace, "Caroline: we adopted a beagle called Zephyr last weekend")
    reviewed = remember(workspace, "Melanie: we adopted a beagle called Biscuit last weekend")
    other = remember(workspace, "The shelter closes at noon on Sundays")
    Memory.objects.filter(pk__in=[flagged.pk, reviewed.pk]).update(reliability="contradicted")
    _flag(workspace, flagged, other, probability=0.6)  # the classifier's guess, open, nobody looked
    record = _flag(workspace, reviewed, other, probability=0.6)
    card = ConflictCard.objects.create(
        workspace=workspace, kind="contradiction", question="Still true?", fact_set_key=str(uuid.uuid4()),
        detector="test", uncertainty=record,
    )  # fmt: skip
    Answer.objects.create(card=card, choice="skip")  # a person saw it and could not settle it

    hits = {h.memory.pk: h for h in recall(workspace=workspace, query=RecallQuery(query="who adopted a beagle"))}

    # 1 − (1 − 0.4) × certainty: unreviewed at 0.5 × its probability 0.6, reviewed in full.
    assert hits[flagged.pk].parts.reliability_factor == pytest.approx(1 - 0.6 * 0.5 * 0.6)
    assert hits[reviewed.pk].parts.reliability_factor == pytest.approx(0.4)
    assert hits[flagged.pk].disputed
    assert hits[reviewed.pk].disputed


@pytest.mark.django_db
def test_a_rule_settled_dispute_counts_in_full(workspace: Workspace) -> None:
    weak = remember(workspace, "The office opens at 8", source="inferred")
    strong = remember(workspace, "The office opens at 9")
    Memory.objects.filter(pk=weak.pk).update(reliability="uncertain")
    _flag(workspace, weak, strong, probability=0.7, state="resolved", resolution_strategy="confidence_dominance")

    hits = {
        h.memory.pk: h
        for h in recall(workspace=workspace, query=RecallQuery(query="office opening time", diversity=False))
    }

    assert hits[weak.pk].parts.reliability_factor == pytest.approx(0.6)


# ------------------------------------------------------------------- diversity keeps distinct information
def test_diversity_keeps_similar_sentences_that_carry_different_information() -> None:
    kyoto = hit("Ana travelled to Kyoto for the cherry blossoms in April")
    oaxaca = hit("Bo travelled to Oaxaca for the Day of the Dead in November", 0.69)

    assert _diverse([kyoto, oaxaca], k=10) == [kyoto, oaxaca]


def test_diversity_still_collapses_a_restatement_and_a_changed_value() -> None:
    original = hit("The team uses Slack for chat")
    restated = hit("Our team chats on Slack", 0.69)
    assert _diverse([original, restated], k=10) == [original]

    price, update = hit("The Growth plan costs $29"), hit("The Growth plan costs $39", 0.69, month=5)
    assert _diverse([price, update], k=10) == [update]  # an answer and its update: the newer


def test_facts_with_different_keys_are_never_collapsed_and_with_one_key_always() -> None:
    city = hit("Lives in Porto with two cats and a dog", key="home_city")
    pets = hit("Lives in Porto with two cats", 0.69, key="pets")
    assert _diverse([city, pets], k=10) == [city, pets]

    before = hit("Home: a flat in Porto near the river with a small balcony", key="home_city")
    after = hit("Home: a house in Lisbon with a garden", 0.69, key="home_city", month=6)
    assert _diverse([before, after], k=10) == [after]


# --------------------------------------------------------------------------- recency within a subject
def test_recency_orders_statements_about_one_subject_and_lifts_no_other_fact() -> None:
    far = [0.0, 1.0] + [0.0] * 382  # cosine 0 with SAME: another subject
    old_answer = hit("The user lives in Utrecht", 0.60, month=1, vector=far)
    stale = hit("The standup is at 9:30", 0.60, month=1)
    update = hit("The standup moved to 10:00", 0.60, month=6)

    _add_subject_recency([old_answer, stale, update], 0.15, None)

    assert old_answer.parts.subject_recency == 1.0  # alone in its subject: no penalty for age
    assert update.parts.subject_recency == 1.0  # the statement in effect
    assert stale.parts.subject_recency < 0.01  # five months older than its update
    assert old_answer.score == pytest.approx(update.score)
    assert update.score > stale.score


def test_facts_with_one_key_are_one_subject_however_differently_worded() -> None:
    far = [0.0, 1.0] + [0.0] * 382
    first = hit("Works at Brannock Tools as a carpenter", 0.6, key="employer", month=1)
    second = hit("Signed with Orrery Labs, starting Monday", 0.6, key="employer", month=4, vector=far)

    _add_subject_recency([first, second], 0.15, None)

    assert second.score > first.score


@pytest.mark.parametrize(
    ("query", "lookup"),
    [
        ("Feature flag service", True),
        ("Where the mother lives", True),
        ("Home city", True),
        ("Where does the user's mother live?", False),
        ("What did Ana say about the trip to Kyoto last spring", False),
        ("", False),
    ],
)
def test_a_bare_subject_is_a_lookup_and_a_question_is_not(query: str, lookup: bool) -> None:
    assert is_subject_lookup(query) is lookup


def test_a_subject_lookup_counts_merely_similar_statements_as_one_subject() -> None:
    # Cosine 0.6 between the two: alike, not near-duplicates.
    similar = [0.6, 0.8] + [0.0] * 382
    unit = [1.0] + [0.0] * 383

    def pair() -> tuple[Hit, Hit]:
        return (
            hit("Feature flags are served by LaunchDarkly.", 0.70, month=1, vector=unit),
            hit("Flags moved to a self-hosted Unleash in April.", 0.66, month=4, vector=similar),
        )

    older, newer = pair()
    _add_subject_recency([older, newer], 0.10, None)  # a question: only near-duplicates are one subject
    assert (older.parts.subject_recency, newer.parts.subject_recency) == (1.0, 1.0)
    assert older.score > newer.score

    older, newer = pair()
    _add_subject_recency([older, newer], 0.10, None, subject_cosine=0.5)  # a bare subject lookup
    assert newer.parts.subject_recency == 1.0
    assert older.parts.subject_recency < 0.01
    assert newer.score > older.score


# ----------------------------------------------------------------------------------- lexical strength
def test_a_match_on_a_word_most_facts_share_is_weak_even_when_it_is_the_pools_best() -> None:
    # Caroline speaks half the conversation; only the fact naming Zephyr holds the question's rare word.
    common_only = {uuid.uuid4(): ["carolin", "weather", "rain"], uuid.uuid4(): ["carolin", "soup"]}
    scores = workspace_bm25(["carolin", "zephyr"], common_only, {"carolin": 60, "zephyr": 1}, 120)
    assert max(scores.values()) < 0.2

    rare = uuid.uuid4()
    scores = workspace_bm25(
        ["carolin", "zephyr"], {**common_only, rare: ["carolin", "meet", "zephyr"]}, {"carolin": 60, "zephyr": 1}, 120
    )
    assert scores[rare] > 0.9


@pytest.mark.django_db
def test_a_rare_name_is_found_at_full_strength_among_many_lines_by_the_same_speaker(workspace: Workspace) -> None:
    for n in range(30):
        remember(workspace, f"Caroline: honestly this week was a blur, day {n} of the rain")
    zephyr = remember(workspace, "Caroline: meet Zephyr, the newest member of the household")

    hits = recall(workspace=workspace, query=RecallQuery(query="Caroline's Zephyr", touch=False))

    assert hits[0].memory.pk == zephyr.pk
    assert hits[0].parts.lexical > 0.8
    assert max(h.parts.lexical for h in hits[1:]) < 0.3


# ------------------------------------------------------------------------------------ questions about a month
def test_a_query_names_a_month_with_its_year() -> None:
    period = query_period("Where was Ana working in May 2023?")
    assert period is not None
    assert (period.start.isoformat(), period.end.isoformat()) == (
        "2023-05-01T00:00:00+00:00",
        "2023-06-01T00:00:00+00:00",
    )
    assert query_period("December of 2024, who ran it?").start.month == 12  # type: ignore[union-attr]
    assert query_period("May I ask where Ana works?") is None  # no year: "may" is a verb


@pytest.mark.django_db
def test_a_question_about_a_past_month_finds_what_was_true_then(workspace: Workspace) -> None:
    porto = remember(workspace, "The user lives in Porto", kind="trait", key="home_city", valid_from=day(2))
    lisbon = remember(workspace, "The user moved to Lisbon", kind="trait", key="home_city", valid_from=day(8))
    memory_supersede(old=porto, new=lisbon, actor=Actor.system("test"))

    now = recall(workspace=workspace, query=RecallQuery(query="Which city does the user live in?", touch=False))
    then = recall(
        workspace=workspace, query=RecallQuery(query="Which city did the user live in during May 2026?", touch=False)
    )

    assert now[0].memory.pk == lisbon.pk
    assert porto.pk not in [h.memory.pk for h in now]  # the chain head stands in for it
    assert then[0].memory.pk == porto.pk
    assert then[0].parts.reliability_factor == 1.0  # superseded after May: the belief then


@pytest.mark.django_db
def test_a_classifiers_unreviewed_supersede_leaves_the_old_fact_findable_below_its_head(workspace: Workspace) -> None:
    sister = remember(workspace, "Lysander: my sister Benedetta opened a little café", valid_from=day(2))
    later = remember(workspace, "Lysander: I relocated to Galway at last", valid_from=day(5))
    memory_supersede(old=sister, new=later, actor=Actor.system("detector"), automatic=True)
    Uncertainty.objects.create(
        workspace=workspace, memory_a=sister, memory_a_kind="fact", memory_b=later, memory_b_kind="fact",
        uncertainty_type="contradiction", severity="high", detection_context="ingestion", detector="classifier",
        probability=0.6, state="resolved", resolution_strategy="temporal_supersede",
    )  # fmt: skip

    hits = recall(workspace=workspace, query=RecallQuery(query="What did Lysander's sister open?", touch=False))

    by_id = {h.memory.pk: h for h in hits}
    assert by_id[later.pk].replaces == sister.pk  # the head still stands in for it, first
    assert [h.memory.pk for h in hits][:2] == [later.pk, sister.pk]
    assert by_id[sister.pk].parts.reliability_factor == pytest.approx(1 - 0.8 * 0.5 * 0.6)


@pytest.mark.django_db
def test_a_supersede_by_a_rule_or_a_person_hides_the_old_fact(workspace: Workspace) -> None:
    old = remember(workspace, "The user lives in Porto", valid_from=day(2))
    new = remember(workspace, "The user moved to Lisbon", valid_from=day(5))
    memory_supersede(old=old, new=new, actor=Actor.system("detector"), automatic=True)
    Uncertainty.objects.create(
        workspace=workspace, memory_a=old, memory_a_kind="fact", memory_b=new, memory_b_kind="fact",
        uncertainty_type="contradiction", severity="high", detection_context="ingestion", detector="rules",
        probability=0.9, state="resolved", resolution_strategy="temporal_supersede",
    )  # fmt: skip

    hits = recall(workspace=workspace, query=RecallQuery(query="Where does the user live?", touch=False))

    assert old.pk not in [h.memory.pk for h in hits]


# ------------------------------------------------------------------------------------ questions about time
@pytest.mark.django_db
def test_a_question_about_when_something_happened_finds_a_superseded_statement(workspace: Workspace) -> None:
    concert = remember(workspace, "Anselm saw Kettle & Crow live at Brixton Academy in March 2026", valid_from=day(3))
    moved = remember(workspace, "Anselm moved to Asheville in September 2026", valid_from=day(9))
    memory_supersede(old=concert, new=moved, actor=Actor.system("test"))  # a wrong supersede, or a true one

    when = recall(
        workspace=workspace, query=RecallQuery(query="When did Anselm go to the Kettle & Crow concert?", touch=False)
    )
    what = recall(workspace=workspace, query=RecallQuery(query="Anselm and the Kettle & Crow concert", touch=False))

    assert when[0].memory.pk == concert.pk  # it happened, whatever is true now
    assert when[0].parts.reliability_factor == 1.0
    assert when[0].replaces is None
    assert concert.pk not in [h.memory.pk for h in what]  # not asked when: the chain head stands in for it


@pytest.mark.django_db
def test_a_question_about_the_last_time_ranks_the_newest_answer_first_and_does_not_match_last(
    workspace: Workspace,
) -> None:
    first = remember(workspace, "Quentin: my first day as a paralegal at Brannock Tools", valid_from=day(2))
    remember(workspace, "Quentin: finished The Salt Orchard last night, the ending wrecked me", valid_from=day(4))
    newest = remember(workspace, "Quentin: I signed with Peregrine Insurance as their data analyst", valid_from=day(8))

    hits = recall(workspace=workspace, query=RecallQuery(query="When did Quentin last change jobs?", touch=False))
    ranked = [h.memory.pk for h in hits]

    assert ranked.index(newest.pk) < ranked.index(first.pk)
    assert all(h.parts.lexical < 0.5 for h in hits if "last night" in h.memory.text)
