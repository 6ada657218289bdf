from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from conflicts.forgetting import StoryFact
from conflicts.models import Answer, ConflictCard, DetectiveRun, Uncertainty
from conflicts.narrative import detective_run, flag_to_card
from conflicts.story import Batch, Flag, short_id, story_line
from conflicts.tasks import detective_request, detective_schedule
from memories.models import Memory
from tests.conftest import AgentClient
from tests.factories import MembershipFactory, UserFactory
from tests.memories.recall_helpers import day, remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db
EVERYTHING = {"first_day": [1.0, 1.0], "first_week": [1.0, 1.0], "older": [1.0, 1.0]}


@pytest.fixture
def broker_story(workspace: Workspace, settings: Any) -> list[Memory]:
    settings.MEMORYHUB_FORGETTING_RATES = EVERYTHING
    return [
        remember(workspace, "Background jobs go through RabbitMQ", scope="backend", valid_from=day(1)),
        remember(workspace, "Moved the job broker from RabbitMQ to SQS", scope="backend", valid_from=day(3)),
        remember(workspace, "Invoices paginate 50 rows per page", scope="frontend", valid_from=day(4)),
        remember(workspace, "Stuck jobs: check the RabbitMQ queue invoices.pdf", scope="backend", valid_from=day(6)),
    ]


def confusions(*items: dict[str, Any]) -> str:
    return json.dumps({"confusions": list(items)})


def test_llm_mode_turns_a_confusion_into_a_card(llm: Any, workspace: Workspace, broker_story: list[Memory]) -> None:
    rabbit, sqs, _, again = broker_story
    ids = [short_id_of(m) for m in (rabbit, sqs, again)]
    llm.script(confusions({"fact_ids": ids, "kind": "reversal", "question": "Is the job broker still SQS?"}))

    run = detective_run(run_id=detective_request(workspace=workspace).pk, mode="llm")

    assert run is not None
    assert (run.state, run.mode, run.batches, run.flags_raised, run.cards_created) == ("done", "llm", 1, 1, 1)
    assert run.tokens == 60
    assert run.facts_read == run.facts_total == 4
    card = ConflictCard.objects.get()
    assert (card.kind, card.question, card.detector) == ("reversal", "Is the job broker still SQS?", "narrative:llm")
    assert [f.memory_id for f in card.card_facts.all()] == [rabbit.pk, sqs.pk, again.pk]
    story = llm.requests[0]["body"]["messages"][1]["content"]
    assert story.index(ids[0]) < story.index(ids[1]) < story.index(ids[2])  # oldest first
    assert llm.requests[0]["body"]["temperature"] == 0


def short_id_of(memory: Memory) -> str:
    from conflicts.forgetting import StoryFact

    return short_id(StoryFact(id=memory.pk, text="", scope="", agent="", at=memory.valid_from))


def offline_flags(workspace: Workspace) -> set[tuple[str, str]]:
    """What the offline detective alone raises on the workspace's story: (kind, question) per card."""
    run = detective_run(run_id=detective_request(workspace=workspace).pk, mode="offline")
    assert run is not None
    assert run.state == "done"
    cards = {(c.kind, c.question) for c in ConflictCard.objects.filter(workspace=workspace)}
    ConflictCard.objects.all().delete()
    Uncertainty.objects.all().delete()
    DetectiveRun.objects.all().delete()
    return cards


def test_malformed_output_is_retried_once_then_read_offline(
    llm: Any, workspace: Workspace, broker_story: list[Memory]
) -> None:
    expected = offline_flags(workspace)
    assert expected  # the story has a reversal the offline detective finds
    llm.script(json.dumps({"confusions": "nope"}), json.dumps({"wrong": []}))

    run = detective_run(run_id=detective_request(workspace=workspace).pk, mode="llm")

    assert run is not None
    assert (run.state, run.mode, run.batches, run.failed_batches) == ("failed", "llm", 1, 1)
    assert "malformed answer" in run.error
    assert len(llm.requests) == 2
    assert {(c.kind, c.question) for c in ConflictCard.objects.all()} == expected
    assert run.flags_raised == len(expected)


def test_hallucinated_ids_and_empty_questions_are_dropped(
    llm: Any, workspace: Workspace, broker_story: list[Memory]
) -> None:
    rabbit, sqs, *_ = broker_story
    good = [short_id_of(rabbit), short_id_of(sqs)]
    llm.script(
        confusions(
            {"fact_ids": [good[0], "deadbeef"], "kind": "ambiguity", "question": "Which broker?"},
            {"fact_ids": good, "kind": "ambiguity", "question": "  "},
            {"fact_ids": good, "kind": "stale", "question": "Is RabbitMQ still used?"},
        )
    )

    run = detective_run(run_id=detective_request(workspace=workspace).pk, mode="llm")

    assert run is not None
    assert run.flags_raised == 1
    assert ConflictCard.objects.get().question == "Is RabbitMQ still used?"


def test_an_unreachable_llm_fails_the_run_and_the_offline_detective_reads_the_story(
    llm: Any, workspace: Workspace, broker_story: list[Memory]
) -> None:
    expected = offline_flags(workspace)
    llm.script(500, 500, 500, 500)

    run = detective_run(run_id=detective_request(workspace=workspace).pk, mode="llm")

    assert run is not None
    assert (run.state, run.batches, run.failed_batches) == ("failed", 1, 1)
    assert run.error.startswith("1 of 1 LLM batches failed, read offline instead: story_confusions")
    assert {(c.kind, c.question) for c in ConflictCard.objects.all()} == expected


def test_the_api_and_the_dashboard_show_a_failed_run(
    llm: Any, workspace: Workspace, broker_story: list[Memory], agent: AgentClient
) -> None:
    llm.script(500, 500)
    run = detective_run(run_id=detective_request(workspace=workspace).pk, mode="llm")
    assert run is not None

    [listed] = agent.get("/detective/runs").json()
    assert (listed["id"], listed["state"], listed["batches"], listed["failed_batches"]) == (run.pk, "failed", 1, 1)
    assert listed["error"] == run.error
    assert listed["flags_raised"] == run.flags_raised > 0

    user = UserFactory(username="ana")
    MembershipFactory(user=user, workspace=workspace, role="viewer")
    client = Client()
    client.force_login(user)
    html = client.get(f"/w/{workspace.slug}/insights/").content.decode()
    runs = html[html.index('id="detective-runs"') :]
    assert '<td class="run-failed">failed (1 of 1 batches offline)</td>' in runs
    assert "1 of 1 LLM batches failed, read offline instead" in runs


def test_a_run_with_some_failed_batches_is_partial_and_reads_those_offline(
    llm: Any, workspace: Workspace, broker_story: list[Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    rabbit, sqs, _, again = broker_story
    deploys = [
        remember(workspace, "Deploys run on Jenkins", scope="ci", valid_from=day(8)),
        remember(workspace, "Moved deploys from Jenkins to GitHub Actions", scope="ci", valid_from=day(10)),
        remember(workspace, "Deploy stuck: restart the Jenkins job deploy-prod", scope="ci", valid_from=day(12)),
    ]

    def two_batches(facts: list[StoryFact]) -> list[Batch]:
        return [Batch(part, [story_line(f) for f in part]) for part in (facts[:4], facts[4:])]

    # One batch at a time, so the stub's replies go to the batches in order: the broker
    # story is read by the LLM, the deploy story's batch fails (twice).
    monkeypatch.setattr("conflicts.narrative.batches", two_batches)
    monkeypatch.setattr("conflicts.detection.detective_llm.PARALLEL_BATCHES", 1)
    ids = [short_id_of(m) for m in (rabbit, sqs, again)]
    llm.script(confusions({"fact_ids": ids, "kind": "reversal", "question": "Is the job broker still SQS?"}), 500, 500)

    run = detective_run(run_id=detective_request(workspace=workspace).pk, mode="llm")

    assert run is not None
    assert (run.state, run.batches, run.failed_batches, run.flags_raised) == ("partial", 2, 1, 2)
    assert run.error.startswith("1 of 2 LLM batches failed, read offline instead")
    assert len(llm.requests) == 3
    cards = {c.detector: [f.memory_id for f in c.card_facts.all()] for c in ConflictCard.objects.all()}
    assert cards == {"narrative:llm": [rabbit.pk, sqs.pk, again.pk], "narrative:offline": [m.pk for m in deploys]}


def test_a_fact_set_is_carded_once_open_or_resolved(workspace: Workspace, broker_story: list[Memory]) -> None:
    rabbit, sqs, *_ = broker_story
    flag = Flag("ambiguity", [rabbit.pk, sqs.pk], "Which broker do jobs use?", "narrative:test")

    first = flag_to_card(workspace=workspace, flag=flag)
    assert first is not None
    ConflictCard.objects.filter(pk=first.pk).update(state="answered")

    assert flag_to_card(workspace=workspace, flag=flag) is None
    assert ConflictCard.objects.count() == 1


def test_a_pair_answered_both_true_is_never_raised_again(workspace: Workspace, broker_story: list[Memory]) -> None:
    rabbit, sqs, pages, again = broker_story
    card = flag_to_card(workspace=workspace, flag=Flag("ambiguity", [rabbit.pk, sqs.pk], "q?", "narrative:test"))
    assert card is not None
    Answer.objects.create(card=card, choice="both")

    wider = Flag("reversal", [rabbit.pk, sqs.pk, again.pk], "Still SQS?", "narrative:test")
    assert flag_to_card(workspace=workspace, flag=wider) is None
    other = Flag("ambiguity", [pages.pk, again.pk], "q?", "narrative:test")
    assert flag_to_card(workspace=workspace, flag=other) is not None


def test_a_card_marks_the_disputed_facts(workspace: Workspace, broker_story: list[Memory]) -> None:
    rabbit, sqs, _, again = broker_story

    flag_to_card(workspace=workspace, flag=Flag("reversal", [rabbit.pk, sqs.pk, again.pk], "q?", "narrative:test"))

    assert {m.reliability for m in Memory.objects.filter(pk__in=[rabbit.pk, sqs.pk, again.pk])} == {"contradicted"}
    assert Memory.objects.get(pk=again.pk).conflict_count == 1


@pytest.mark.parametrize("names_its_claim", [True, False])
def test_a_stale_card_doubts_the_claim_not_the_evidence(workspace: Workspace, names_its_claim: bool) -> None:
    leave = remember(workspace, "User is on parental leave: no work calls", scope="work", valid_from=day(1))
    meeting = remember(workspace, "Standing team meeting on Mondays", scope="work", valid_from=day(5))
    workshops = remember(workspace, "Client workshops on Tuesdays", scope="work", valid_from=day(11))
    ids = [leave.pk, meeting.pk, workshops.pk]
    # The offline detective names the stale fact; an LLM's flag leaves it to the card.
    flag = Flag(
        "stale", ids, "Is the user still on leave?", "narrative:test", asked=leave.pk if names_its_claim else None
    )

    card = flag_to_card(workspace=workspace, flag=flag)

    assert card is not None
    reliability = dict(Memory.objects.filter(pk__in=ids).values_list("pk", "reliability"))
    if names_its_claim:
        assert card.asked_memory_id == leave.pk
        assert reliability == {leave.pk: "uncertain", meeting.pk: "reliable", workshops.pk: "reliable"}
    else:  # all but the newest statement, as before
        assert reliability == {leave.pk: "uncertain", meeting.pk: "uncertain", workshops.pk: "reliable"}


def test_a_burst_of_commits_queues_one_run(workspace: Workspace, broker_story: list[Memory]) -> None:
    runs = [detective_schedule(workspace=workspace, trigger_memory=m) for m in broker_story * 25]

    assert sum(run is not None for run in runs) == 1
    assert DetectiveRun.objects.filter(state="queued").count() == 1


def test_a_commit_during_a_run_queues_the_next_one(workspace: Workspace, broker_story: list[Memory]) -> None:
    first = detective_schedule(workspace=workspace)
    assert first is not None
    DetectiveRun.objects.filter(pk=first.pk).update(state="running")

    second = detective_schedule(workspace=workspace)

    assert second is not None
    assert second.pk != first.pk


def test_a_run_is_claimed_once(workspace: Workspace, broker_story: list[Memory], monkeypatch: Any) -> None:
    monkeypatch.setattr("conflicts.narrative._carry_out", lambda run, mode: None)
    run = detective_request(workspace=workspace)

    assert detective_run(run_id=run.pk) is not None
    assert detective_run(run_id=run.pk) is None


def test_the_api_queues_a_run_and_lists_runs(agent: AgentClient) -> None:
    response = agent.grant("admin").post("/detective/run")

    assert response.status_code == 202
    body = response.json()
    assert body["state"] == "queued"
    assert agent.post("/detective/run").json()["id"] == body["id"]  # still the same queued run
    assert [r["id"] for r in agent.get("/detective/runs").json()] == [body["id"]]


def test_an_offline_run_reads_its_facts_in_a_fixed_number_of_queries(workspace: Workspace, settings: Any) -> None:
    # Each deferred field a fact needs would cost one query per fact read (800 per run at scale).
    settings.MEMORYHUB_FORGETTING_RATES = EVERYTHING

    def queries_for_a_run() -> int:
        run = detective_request(workspace=workspace)
        with CaptureQueriesContext(connection) as captured:
            detective_run(run_id=run.pk, mode="offline")
        return len(captured)

    unrelated = [
        "Invoices are generated on the first of the month",
        "The design system uses an 8-pixel grid",
        "Ana owns the payments service",
        "Support replies within one business day",
        "The mobile app supports Android 10 and later",
        "Staging data is refreshed every Sunday night",
        "The marketing site is built with Astro",
        "Office plants are watered on Fridays",
        "Error pages link to the status page",
        "The data team publishes a weekly metrics digest",
        "Customer logos need written permission before use",
        "The CLI reads its config from ~/.acme/config.toml",
    ]
    for n, text in enumerate(unrelated[:3]):
        remember(workspace, text, scope=f"area-{n}", valid_from=day(1, n + 1))
    few = queries_for_a_run()
    for n, text in enumerate(unrelated[3:], start=3):
        remember(workspace, text, scope=f"area-{n}", valid_from=day(1, n + 1))

    assert ConflictCard.objects.count() == 0
    assert queries_for_a_run() == few
