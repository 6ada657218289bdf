from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any

import pytest

from conflicts.detection import classifier
from conflicts.models import Uncertainty
from memories.audit import Actor
from memories.models import Link, Memory
from memories.services import memory_supersede
from recall import hybrid
from recall.hybrid import Expand, RecallQuery, bm25_terms, recall
from tests.memories.recall_helpers import day, remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def ids(hits: list) -> list:
    return [h.memory.pk for h in hits]


def test_it_ranks_an_exact_identifier_above_a_vague_paraphrase_in_hybrid_mode(workspace: Workspace) -> None:
    exact = remember(workspace, "PR #441 fixed the login timeout")
    paraphrase = remember(workspace, "A pull request repaired a problem where signing in took too long")
    remember(workspace, "The office coffee machine is broken")

    hybrid = recall(workspace=workspace, query=RecallQuery(query="PR #441"))

    assert ids(hybrid)[0] == exact.pk
    assert hybrid[0].parts.lexical == 1.0
    assert paraphrase.pk in ids(hybrid)


def test_lexical_scoring_stems_english_words_and_keeps_identifiers_whole() -> None:
    assert bm25_terms("Restores now use delta mode") == ["restor", "use", "delta", "mode"]  # "now": a stop word
    assert bm25_terms("restore drills") == ["restor", "drill"]
    assert bm25_terms("E4012 in v2 builds") == ["e4012", "v2", "build"]


def test_a_joined_identifier_is_one_query_term_and_a_fact_keeps_its_parts_too() -> None:
    assert bm25_terms("INC-2291 root cause", query=True) == ["inc-2291", "root", "caus"]
    assert bm25_terms("INC-2291 opened") == ["inc", "2291", "open", "inc-2291"]
    assert bm25_terms("What is at 10.0.3.7?", query=True) == ["10.0.3.7"]  # only stop words besides
    assert bm25_terms("PAY 1234", query=True) == ["pay", "1234"]  # still meets the fact's parts
    assert bm25_terms("v2.14.3 on 10.0.3.7.", query=True) == ["v2.14.3", "10.0.3.7"]
    assert bm25_terms("city-break deals", query=True) == ["citi", "break", "deal"]  # no digit: words


def test_a_ticket_key_in_every_fact_does_not_outvote_the_word_that_tells_them_apart(workspace: Workspace) -> None:
    roles = remember(workspace, "INC-2291 roles: IC is Rafaela")
    cause = remember(workspace, "Cause found: a config push cut the worker memory limit")
    remember(workspace, "INC-2291 opened: elevated 5xx on the transcode API")
    for n in range(10):
        remember(workspace, f"Team lunch number {n} is at the noodle place")

    hits = recall(workspace=workspace, query=RecallQuery(query="INC-2291 root cause", weights={"cosine": 0.0}))

    assert hits[0].memory.pk == cause.pk
    assert hits[0].parts.lexical == max(h.parts.lexical for h in hits)
    assert next(h for h in hits if h.memory.pk == roles.pk).parts.lexical < 1.0


def test_an_inflected_word_counts_as_a_lexical_match(workspace: Workspace) -> None:
    inflected = remember(workspace, "Restores now use delta mode and finish in 26 minutes")
    remember(workspace, "The quarterly drill passed in 41 minutes")

    hits = recall(workspace=workspace, query=RecallQuery(query="restore"))

    by_id = {h.memory.pk: h for h in hits}
    # The fact holds the query's only word; BM25's length normalisation keeps it just under 1.
    assert by_id[inflected.pk].parts.lexical == max(h.parts.lexical for h in hits) > 0.9


def test_the_hnsw_search_beam_widens_with_the_index() -> None:
    from recall.hybrid import MAX_EF_SEARCH, MIN_EF_SEARCH, ef_search_for

    assert ef_search_for(0) == MIN_EF_SEARCH
    assert ef_search_for(100_000) == MIN_EF_SEARCH
    assert MIN_EF_SEARCH < ef_search_for(400_000) < ef_search_for(1_000_000) <= MAX_EF_SEARCH
    assert ef_search_for(50_000_000) == MAX_EF_SEARCH


def test_it_ranks_the_newer_of_two_near_identical_facts_first(workspace: Workspace) -> None:
    older = remember(workspace, "The public API rate limit is 1000 requests per second", valid_from=day(1))
    newer = remember(workspace, "The public API rate limit is 1000 requests per second.", valid_from=day(6))

    hits = recall(workspace=workspace, query=RecallQuery(query="API rate limit", diversity=False))

    assert ids(hits)[:2] == [newer.pk, older.pk]
    assert hits[0].parts.recency > hits[1].parts.recency


def test_cosine_only_weights_rank_like_semantic_mode(workspace: Workspace) -> None:
    for text in [
        "We deploy on Fridays only after the QA sign-off",
        "Deployments happen every weekday morning",
        "The database is PostgreSQL 16",
        "Our CI runs on GitHub Actions",
        "Releases are cut from the main branch",
    ]:
        remember(workspace, text, importance=0.9 if "Post" in text else 0.2)

    semantic = recall(workspace=workspace, query=RecallQuery(query="when do we deploy", mode="semantic"))
    cosine_only = recall(
        workspace=workspace,
        query=RecallQuery(
            query="when do we deploy",
            weights={"cosine": 1.0, "lexical": 0.0, "recency": 0.0, "importance": 0.0, "confidence": 0.0},
        ),
    )

    assert ids(semantic) == ids(cosine_only)
    assert [h.score for h in semantic] == pytest.approx([h.score for h in cosine_only])


def test_it_returns_the_head_of_a_supersede_chain_instead_of_a_superseded_hit(workspace: Workspace) -> None:
    first = remember(workspace, "The user lives in Porto", kind="trait", key="home_city", valid_from=day(1))
    second = remember(workspace, "The user moved to Lisbon", kind="trait", key="home_city", valid_from=day(3))
    head = remember(workspace, "The user now lives in Madrid", kind="trait", key="home_city", valid_from=day(5))
    actor = Actor.system("test")
    memory_supersede(old=first, new=second, actor=actor)
    memory_supersede(old=second, new=head, actor=actor)

    hits = recall(workspace=workspace, query=RecallQuery(query="Does the user live in Porto?"))

    assert ids(hits) == [head.pk]
    assert hits[0].replaces in {first.pk, second.pk}

    everything = recall(
        workspace=workspace, query=RecallQuery(query="Does the user live in Porto?", include_superseded=True)
    )
    assert set(ids(everything)) == {first.pk, second.pk, head.pk}
    superseded = next(h for h in everything if h.memory.pk == first.pk)
    assert superseded.parts.reliability_factor == 0.3  # 0.2 lifted to the floor


def test_a_chain_head_is_as_relevant_as_the_superseded_fact_it_stands_in_for(workspace: Workspace) -> None:
    """The old fact matched the question; its successor answers it now, in other words."""
    old = remember(workspace, "Builds and tests run on Jenkins CI", valid_from=day(1))
    head = remember(workspace, "Moved everything over to GitHub Actions last week", valid_from=day(5))
    nearby = remember(workspace, "The CI dashboard hangs on the big screen by the kitchen", valid_from=day(9))
    memory_supersede(old=old, new=head, actor=Actor.system("test"))
    question = RecallQuery(query="Which CI system runs our builds and tests?")
    matched = recall(workspace=workspace, query=replace(question, include_superseded=True))
    old_hit = next(h for h in matched if h.memory.pk == old.pk)
    own = next(h for h in matched if h.memory.pk == head.pk)
    assert own.parts.cosine < old_hit.parts.cosine - 0.2, "the head alone is a weak match"

    hits = recall(workspace=workspace, query=question)

    assert ids(hits)[:2] == [head.pk, nearby.pk]
    assert hits[0].replaces == old.pk
    assert hits[0].parts.cosine == pytest.approx(old_hit.parts.cosine, abs=1e-5)
    assert hits[0].parts.lexical == pytest.approx(old_hit.parts.lexical)
    assert hits[0].parts.recency == pytest.approx(own.parts.recency)  # the head's own


def test_as_of_answers_with_what_was_believed_then(workspace: Workspace) -> None:
    porto = remember(workspace, "The user lives in Porto", kind="trait", valid_from=day(1))
    lisbon = remember(workspace, "The user lives in Lisbon", kind="trait", valid_from=day(3))
    Memory.objects.filter(pk__in=[porto.pk, lisbon.pk]).update(recorded_at=day(1))
    memory_supersede(old=porto, new=lisbon, actor=Actor.system("test"))

    then = recall(workspace=workspace, query=RecallQuery(query="where does the user live", as_of=day(2)))
    now = recall(workspace=workspace, query=RecallQuery(query="where does the user live"))

    assert ids(then) == [porto.pk]
    assert then[0].parts.reliability_factor == 1.0
    assert ids(now) == [lisbon.pk]


def test_as_of_ignores_facts_recorded_later(workspace: Workspace) -> None:
    remember(workspace, "The staging server is called atlas", valid_from=day(1))

    assert recall(workspace=workspace, query=RecallQuery(query="staging server", as_of=day(1))) == []


def test_a_contradicted_fact_still_surfaces_with_its_flag_and_the_other_side(workspace: Workspace) -> None:
    rest = remember(workspace, "The public API is REST", importance=0.9)
    graphql = remember(workspace, "The public API is GraphQL", importance=0.9)
    Memory.objects.filter(pk__in=[rest.pk, graphql.pk]).update(reliability="contradicted")
    uncertainty = Uncertainty.objects.create(
        workspace=workspace,
        memory_a=rest,
        memory_a_kind="fact",
        memory_b=graphql,
        memory_b_kind="fact",
        uncertainty_type="contradiction",
        severity="high",
        detection_context="ingestion",
    )

    hits = recall(workspace=workspace, query=RecallQuery(query="What style is the public API?"))

    assert set(ids(hits)) == {rest.pk, graphql.pk}
    for hit in hits:
        assert hit.disputed
        assert hit.parts.reliability_factor == 0.4
        assert hit.open_uncertainties == [uncertainty.pk]
        assert hit.score > 0
    by_id = {h.memory.pk: h for h in hits}
    assert [m.pk for m in by_id[rest.pk].contradicted_by] == [graphql.pk]


def test_a_contradicts_link_names_the_other_side_once(workspace: Workspace) -> None:
    rest = remember(workspace, "The public API is REST", importance=0.9)
    graphql = remember(workspace, "The public API is GraphQL", importance=0.9)
    Memory.objects.filter(pk=rest.pk).update(reliability="contradicted")
    Link.objects.create(workspace=workspace, src=rest, dst=graphql, rel="contradicts")
    Link.objects.create(workspace=workspace, src=graphql, dst=rest, rel="contradicts")

    hits = recall(workspace=workspace, query=RecallQuery(query="What style is the public API?"))

    by_id = {h.memory.pk: h for h in hits}
    assert [m.pk for m in by_id[rest.pk].contradicted_by] == [graphql.pk]
    assert by_id[rest.pk].contradicted_by[0].text == "The public API is GraphQL"
    assert [m.pk for m in by_id[graphql.pk].contradicted_by] == [rest.pk]  # the link names it, though unmarked
    assert by_id[rest.pk].open_uncertainties == []


def test_near_duplicates_collapse_to_the_most_confident_and_k_stays_k(workspace: Workspace) -> None:
    remember(workspace, "The team uses Slack for chat", confidence=0.5)
    confident = remember(workspace, "The team uses Slack for chat.", confidence=0.95)
    remember(workspace, "Our team chats on Slack", confidence=0.7)
    others = [
        remember(workspace, text)
        for text in ["Standups are at 9:30", "Email is for customers only", "Video calls use Zoom"]
    ]

    hits = recall(workspace=workspace, query=RecallQuery(query="which chat tool does the team use", k=4))

    assert len(hits) == 4
    slack = [h for h in hits if "Slack" in h.memory.text]
    assert [h.memory.pk for h in slack] == [confident.pk]
    assert {h.memory.pk for h in hits} - {confident.pk} <= {m.pk for m in others}


@pytest.mark.parametrize(
    ("newer_score", "newer_confidence", "kept"),
    [
        (0.68, 0.9, "newer"),  # ranks alike, equally sure: the update wins
        (0.50, 0.9, "older"),  # a clearly better match stays
        (0.68, 0.5, "older"),  # the older is clearly more confident
    ],
)
def test_diversity_keeps_the_newer_of_two_near_identical_statements_only_when_they_rank_alike(
    newer_score: float, newer_confidence: float, kept: str
) -> None:
    from recall.hybrid import Hit, ScoreParts, _diverse

    vector = [1.0] + [0.0] * 383
    older = Memory(text="The Growth plan costs $29", confidence=0.9, valid_from=day(1), embedding=vector)
    newer = Memory(text="The Growth plan costs $39", confidence=newer_confidence, valid_from=day(5), embedding=vector)
    hits = [Hit(older, 0.70, ScoreParts(), "reliable"), Hit(newer, newer_score, ScoreParts(), "reliable")]

    (survivor,) = _diverse(hits, k=10)

    assert survivor.memory is (newer if kept == "newer" else older)


@pytest.mark.parametrize(("newer_score", "newer_first"), [(0.66, True), (0.55, False)])
def test_of_two_answers_to_the_same_question_the_newer_goes_first_when_they_rank_alike(
    newer_score: float, newer_first: bool
) -> None:
    from recall.hybrid import Hit, ScoreParts, _newer_first

    old_vector = [1.0, 0.0] + [0.0] * 382
    new_vector = [0.8, 0.6] + [0.0] * 382  # cosine 0.8 with the old one: the same question
    other_vector = [0.0, 0.0, 1.0] + [0.0] * 381
    older = Memory(text="Ana runs the platform team", confidence=0.9, valid_from=day(3), embedding=old_vector)
    other = Memory(text="Standups are at 9:30", confidence=0.9, valid_from=day(1), embedding=other_vector)
    newer = Memory(text="Bo runs the platform team", confidence=0.9, valid_from=day(6), embedding=new_vector)
    hits = [
        Hit(older, 0.70, ScoreParts(), "reliable"),
        Hit(other, 0.68, ScoreParts(), "reliable"),
        Hit(newer, newer_score, ScoreParts(), "reliable"),
    ]

    order = [h.memory.text for h in _newer_first(hits)]

    expected = ["Bo", "Ana", "Standups"] if newer_first else ["Ana", "Standups", "Bo"]
    assert [text.split()[0] for text in order] == expected


@pytest.mark.parametrize(
    ("newer_scope", "newer_agent", "cosine", "newer_first"),
    [
        ("backups", "sre-copilot", 0.64, True),  # one agent's running reports in one scope
        ("backups", "policy-agent", 0.64, False),  # another writer: only cosine ≥ 0.7 would do
        ("", "sre-copilot", 0.64, False),  # no scope, no stream
        ("backups", "sre-copilot", 0.5, False),  # the same stream, but about something else
    ],
)
def test_one_agents_reports_in_one_scope_need_less_similarity_to_answer_the_same_question(
    newer_scope: str, newer_agent: str, cosine: float, newer_first: bool
) -> None:
    from recall.hybrid import Hit, ScoreParts, _newer_first

    old_vector = [1.0, 0.0] + [0.0] * 382
    new_vector = [cosine, (1 - cosine**2) ** 0.5] + [0.0] * 382
    older = Memory(
        text="Quarterly restore drill passed: restored into staging in 41 minutes",
        scope="backups" if newer_scope else "",
        agent="sre-copilot",
        confidence=0.9,
        valid_from=day(1),
        embedding=old_vector,
    )
    newer = Memory(
        text="Restores now use delta mode; the latest drill took 26 minutes",
        scope=newer_scope,
        agent=newer_agent,
        confidence=0.9,
        valid_from=day(8),
        embedding=new_vector,
    )
    hits = [Hit(older, 0.61, ScoreParts(), "reliable"), Hit(newer, 0.59, ScoreParts(), "reliable")]

    order = [h.memory for h in _newer_first(hits)]

    assert order == ([newer, older] if newer_first else [older, newer])


def test_lexical_candidates_that_rank_alike_are_taken_closest_in_meaning_first(workspace: Workspace) -> None:
    from memories.embeddings import embed_text
    from recall.hybrid import _filtered, _lexical_candidates

    topics = ["billing invoices", "the login page", "search filters", "the mobile app", "CSV exports"]
    for topic in topics:
        remember(workspace, f"Ticket ZX-81 is about {topic}")
    calendar = remember(workspace, "Ticket ZX-81 is about the team calendar")
    query = "ZX-81 calendar invites"

    (first,) = _lexical_candidates(_filtered(workspace, RecallQuery(query=query)), "ZX-81", 1, embed_text(query))

    # Each fact matches the one rare word once, so all rank alike: meaning decides, not row order.
    assert first.pk == calendar.pk


def test_words_common_to_much_of_the_workspace_fetch_no_lexical_candidates(workspace: Workspace) -> None:
    from django.db import connection

    from recall import hybrid as recall_module

    Memory.objects.bulk_create(
        Memory(workspace=workspace, text=f"The team shipped release {n}", status="active") for n in range(600)
    )
    remember(workspace, "Ticket ZX-81 is about the team calendar")
    try:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memories_memory")
        recall_module._statistics.clear()

        assert "team" in recall_module._common_lexemes()
        rare = recall_module._rare_lexemes("team ZX-81")
        assert "zx" in rare
        assert "team" not in rare
        hits = recall(workspace=workspace, query=RecallQuery(query="team ZX-81", k=1))
        assert "ZX-81" in hits[0].memory.text
    finally:
        # ANALYZE's statistics outlive the test's rollback: leave them as an empty table's.
        Memory.objects.filter(workspace=workspace).delete()
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memories_memory")
        recall_module._statistics.clear()


def test_expansion_follows_links_and_stops_on_cycles(workspace: Workspace) -> None:
    example = remember(workspace, "Invoice 2291 was sent without a purchase order number")
    rule = remember(workspace, "Never send an invoice without the customer's purchase order number")
    policy = remember(workspace, "Finance policy: billing documents need approval from the account owner")
    Link.objects.create(workspace=workspace, src=example, dst=rule, rel="example_of")
    Link.objects.create(workspace=workspace, src=rule, dst=policy, rel="refines")
    Link.objects.create(workspace=workspace, src=policy, dst=example, rel="refines")  # closes a cycle

    hits = recall(
        workspace=workspace,
        query=RecallQuery(query="invoice 2291", k=1, expand=Expand(rels=("example_of", "refines"), depth=5)),
    )

    assert ids(hits) == [example.pk, rule.pk, policy.pk]
    assert [h.expanded for h in hits] == [False, True, True]
    assert hits[1].via == example.pk
    assert hits[1].score == 0.7


def test_recall_touches_access_counters_without_changing_the_order(workspace: Workspace) -> None:
    for text in ["Backups run nightly at 2am", "Backups are kept for 30 days", "Restores are tested monthly"]:
        remember(workspace, text)

    first = recall(workspace=workspace, query=RecallQuery(query="backups"))
    second = recall(workspace=workspace, query=RecallQuery(query="backups"))

    assert ids(first) == ids(second)
    assert Memory.objects.get(pk=first[0].memory.pk).access_count == 2


def test_a_pending_fact_is_found_by_its_words_before_it_is_embedded(workspace: Workspace) -> None:
    from memories.services import MemoryInput, memory_create

    pending = memory_create(
        workspace=workspace, actor=Actor.system("test"), data=MemoryInput(text="The VPN gateway is vpn-7.acme.io")
    )

    hits = recall(workspace=workspace, query=RecallQuery(query="VPN gateway"))

    assert ids(hits) == [pending.pk]
    assert hits[0].parts.cosine == 0.0


def test_recall_runs_the_same_few_queries_however_many_candidates(
    workspace: Workspace, django_assert_max_num_queries: Callable[[int], AbstractContextManager[Any]]
) -> None:
    for n in range(45):
        remember(workspace, f"Service {n} of the team runs on port {8000 + n}")
    Memory.objects.create(workspace=workspace, text="The team's pending fact is not embedded yet")

    with django_assert_max_num_queries(QUERIES_PER_RECALL):
        hits = recall(workspace=workspace, query=RecallQuery(query="which port does the team service run on"))

    assert 0 < len(hits) <= 10  # near-identical facts collapse


# recall's one transaction (2: a savepoint here, BEGIN and COMMIT outside a test), its settings (1),
# candidates (2, the nearest with their vectors), rare lexemes (1) and common-word statistics (1, cached),
# the query words' document frequencies (1) and the workspace's size (1, cached), vectors of top hits
# the candidates did not bring (none here; at most three batches when near-duplicates crowd the top),
# disputes (1), touch (1, with its setting): nothing per candidate. (A disputed candidate adds one: how sure.)
QUERIES_PER_RECALL = 14


def test_recency_does_not_lift_a_newer_fact_unrelated_to_the_query(workspace: Workspace) -> None:
    # Recency orders facts that answer the query; the week's newest fact about something
    # else ("Dutch class moved") must not outrank the older answer on freshness alone.
    answer = remember(workspace, "User lives in Utrecht", valid_from=day(3))
    remember(workspace, "Dutch class moved to Wednesday evenings", valid_from=day(9))
    remember(workspace, "Prefers aisle seats on long flights", valid_from=day(8))

    hits = recall(workspace=workspace, query=RecallQuery(query="Home city", touch=False))

    assert hits[0].memory.pk == answer.pk
    assert hits[0].parts.recency < max(h.parts.recency for h in hits)


def _three_days_apart(workspace: Workspace, older_text: str, newer_text: str) -> tuple[Memory, Memory]:
    return remember(workspace, older_text, valid_from=day(2)), remember(workspace, newer_text, valid_from=day(5))


@pytest.mark.parametrize(
    ("lookup", "older_text", "newer_text"),
    [
        ("Payroll provider", "Payroll is run through Gusto.", "Payroll switched to Deel for the contractors abroad."),
        (
            "Error tracker",
            "Errors are reported to Sentry.",
            "Crash reports now go to Bugsnag; the Sentry project is archived.",
        ),
        # A later stage of one thing: the lookup reader reads it (0.97); the slot reader does not (0.01).
        ("Android login crash", "Bug MOB-88: the Android app crashes on login.", "MOB-88 fixed in app version 3.4.1."),
    ],
)
def test_a_subject_lookup_puts_a_newer_fact_read_as_another_value_of_the_top_hit_first(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, lookup: str, older_text: str, newer_text: str
) -> None:
    # Nothing retired the older fact (no detection ran): ranking alone puts it first on its words.
    older, newer = _three_days_apart(workspace, older_text, newer_text)
    query = RecallQuery(query=lookup, touch=False)
    monkeypatch.setattr(hybrid, "LOOKUP_PAIRS_READ", False)
    assert ids(recall(workspace=workspace, query=query)) == [older.pk, newer.pk]

    monkeypatch.setattr(hybrid, "LOOKUP_PAIRS_READ", True)
    hits = recall(workspace=workspace, query=query)

    assert ids(hits) == [newer.pk, older.pk], "the newer value first, the older one still there"
    # As relevant as the fact it answers for, at least (the better of the two, as for a chain head).
    assert hits[0].parts.cosine >= hits[1].parts.cosine
    assert hits[0].parts.lexical >= hits[1].parts.lexical


def test_a_subject_lookup_reads_no_newer_fact_about_another_of_the_owners_things(workspace: Workspace) -> None:
    # The readers read the club's move as another value of the shoes (the user's, both); the subjects
    # say two attributes of the user's, so the pair is not read and the shoes keep their place.
    shoes, club = _three_days_apart(
        workspace,
        "The user's running shoes are Asics Novablast.",
        "The user's running club moved to Saturday mornings.",
    )
    assert (shoes.subject_attribute, club.subject_attribute) == ("running shoes", "running club")

    hits = recall(workspace=workspace, query=RecallQuery(query="Running shoes", touch=False))

    assert ids(hits)[:2] == [shoes.pk, club.pk]


@pytest.mark.parametrize(
    "newer_text",
    [
        "The team offsite moved to Friday 12 June, in Lisbon.",  # read as a value, but another thing by a shared word
        "Team lunch budget is 15 euros a head from now on.",  # another property: the reader says so
    ],
)
def test_a_subject_lookup_keeps_its_top_hit_above_a_newer_fact_about_something_else(
    workspace: Workspace, newer_text: str
) -> None:
    older = remember(workspace, "Team lunch is on Wednesdays at the Thai place.", valid_from=day(2))
    remember(workspace, newer_text, valid_from=day(5))

    hits = recall(workspace=workspace, query=RecallQuery(query="Team lunch day", touch=False))

    assert hits[0].memory.pk == older.pk


@pytest.mark.parametrize(
    ("lookup", "older_text", "newer_text"),
    [
        (
            "3fa91c2",
            "Commit 3fa91c2 introduced the race condition in the scheduler.",
            "The race condition in the scheduler was fixed by commit 9bd0e11.",
        ),
        (
            "billing v3.2.0",
            "Release v3.2.0 of billing introduced the rounding errors in tax totals.",
            "Billing v3.2.4 fixed the rounding errors in tax totals.",
        ),
    ],
)
def test_a_lookup_for_an_identifier_is_answered_by_the_fact_that_names_it(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, lookup: str, older_text: str, newer_text: str
) -> None:
    # The lookup reader reads the bug's fix as a later stage (0.82, 0.98), but the lookup asks about the commit.
    older, newer = _three_days_apart(workspace, older_text, newer_text)
    query = RecallQuery(query=lookup, touch=False)

    assert ids(recall(workspace=workspace, query=query))[0] == older.pk

    monkeypatch.setattr(hybrid, "_identifiers_named", lambda text: set())
    assert ids(recall(workspace=workspace, query=query))[0] == newer.pk, "read without the identifier, it lifts"


def test_only_a_bare_subject_lookup_reads_its_hits_and_only_facts_a_day_or_more_apart(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember(workspace, "Payroll is run through Gusto.", valid_from=day(2))
    later_that_morning = day(2) + dt.timedelta(hours=3)
    remember(workspace, "Payroll switched to Deel for the contractors abroad.", valid_from=later_that_morning)
    read: list[list[tuple[str, str]]] = []
    monkeypatch.setattr(
        classifier, "another_value_readings", lambda pairs: read.append([(a.text, b.text) for a, b in pairs]) or []
    )

    recall(workspace=workspace, query=RecallQuery(query="Who runs payroll for us?", touch=False))
    assert read == [], "a question is not a subject lookup"
    recall(workspace=workspace, query=RecallQuery(query="Payroll provider", touch=False))
    assert read == [[]], "three hours apart: no news of a change in the world"


@pytest.mark.django_db(transaction=True)
def test_recall_is_one_transaction_whose_settings_end_with_it() -> None:
    from django.db import connection

    from tests.factories import WorkspaceFactory

    workspace = WorkspaceFactory(slug="acme")
    remember(workspace, "Backups run nightly at 2am")
    with connection.cursor() as cursor:
        cursor.execute("SHOW hnsw.ef_search")
        (default_beam,) = cursor.fetchone()

    hits = recall(workspace=workspace, query=RecallQuery(query="backups"))

    assert len(hits) == 1
    assert Memory.objects.get(pk=hits[0].memory.pk).access_count == 1  # the touch committed
    assert not connection.in_atomic_block
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('hnsw.ef_search'), current_setting('synchronous_commit')")
        assert cursor.fetchone() == (default_beam, "on")
