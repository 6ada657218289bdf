"""The LLM's circuit breaker: consecutive failures pause the tier for a cool-down, then one call probes."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from conflicts.detection.llm import escalate_unsure
from conflicts.detection.pipeline import check_next_waiting
from conflicts.detection.verdict import Relation, Verdict
from conflicts.narrative import detective_run
from conflicts.tasks import detective_request
from memories.models import Memory
from memoryhub.llm import BREAKER, llm_paused
from memoryhub.models import CircuitBreaker
from tests.conflicts.scripted import ScriptedClassifier, scripted, unsure
from tests.memories.recall_helpers import day, remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

OK = '{"verdicts": []}'


@pytest.fixture
def breaker(llm: Any, settings: Any) -> Any:
    settings.MEMORYHUB_LLM_BREAKER_FAILURES = 2
    settings.MEMORYHUB_LLM_BREAKER_COOLDOWN_SECONDS = 60
    return llm


@pytest.fixture
def pair(workspace: Workspace) -> tuple[Memory, Memory]:
    return (
        remember(workspace, "Ana hates mornings", valid_from=day(1)),
        remember(workspace, "Ana goes running at 6am every day", valid_from=day(2)),
    )


def ask(pair: tuple[Memory, Memory]) -> Verdict:
    [verdict] = escalate_unsure([pair], [unsure()])
    return verdict


def cool_down_over() -> None:
    CircuitBreaker.objects.filter(name=BREAKER).update(open_until=timezone.now() - dt.timedelta(seconds=1))


def test_it_opens_after_n_failed_calls_and_skips_the_llm_during_the_cool_down(
    breaker: Any, pair: tuple[Memory, Memory]
) -> None:
    breaker.script(500, 500)  # one call: two attempts, one failure
    ask(pair)
    assert llm_paused() is None

    breaker.script(("sleep", 1.5), ("sleep", 1.5))  # the second failed call: timeouts
    before = timezone.now()
    ask(pair)

    pause = llm_paused()
    assert pause is not None
    assert pause.failures == 2
    assert before + dt.timedelta(seconds=59) < pause.until <= timezone.now() + dt.timedelta(seconds=60)
    assert "pair_verdicts" in pause.last_error
    sent = len(breaker.requests)

    assert ask(pair) == unsure()  # the offline verdict stands
    assert len(breaker.requests) == sent  # and the stub saw no call


def test_an_answer_before_the_threshold_resets_the_count(breaker: Any, pair: tuple[Memory, Memory]) -> None:
    breaker.script(500, 500, OK, 500, 500)

    ask(pair)
    ask(pair)
    ask(pair)

    assert llm_paused() is None
    assert CircuitBreaker.objects.get(name=BREAKER).consecutive_failures == 1


def test_after_the_cool_down_one_answer_closes_it(breaker: Any, pair: tuple[Memory, Memory]) -> None:
    breaker.script(500, 500, 500, 500)
    ask(pair)
    ask(pair)
    assert llm_paused() is not None
    cool_down_over()
    breaker.script(
        '{"verdicts": [{"pair": 0, "relation": "figurative", "current": null, "confidence": 0.8, "reasoning": "x"}]}'
    )

    assert ask(pair).tier == "llm"  # the probe went out and its answer is used

    assert llm_paused() is None
    row = CircuitBreaker.objects.get(name=BREAKER)
    assert (row.consecutive_failures, row.open_until, row.opened_at) == (0, None, None)
    assert len(breaker.requests) == 5


def test_a_failed_probe_opens_it_for_another_cool_down(breaker: Any, pair: tuple[Memory, Memory]) -> None:
    breaker.script(500, 500, 500, 500)
    ask(pair)
    ask(pair)
    cool_down_over()
    breaker.script(503, 503)

    ask(pair)

    pause = llm_paused()
    assert pause is not None
    assert pause.failures == 3
    assert pause.until > timezone.now() + dt.timedelta(seconds=50)
    assert len(breaker.requests) == 6


def test_only_one_caller_probes_when_the_cool_down_is_over(breaker: Any) -> None:
    from memoryhub.llm import llm_admit

    CircuitBreaker.objects.create(
        name=BREAKER, consecutive_failures=2, open_until=timezone.now() - dt.timedelta(seconds=1)
    )

    assert llm_admit() is True  # the probe
    assert llm_admit() is False  # everyone else waits for its answer
    assert llm_paused() is not None


def test_the_background_check_runs_offline_while_it_is_open(
    breaker: Any, pair: tuple[Memory, Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    older, newer = pair
    Memory.objects.filter(pk=older.pk).update(checked_at=timezone.now())
    classify = ScriptedClassifier({(older.text, newer.text): scripted(Relation.TRUE_CONTRADICTION, p=0.55)})
    monkeypatch.setattr("conflicts.detection.pipeline.offline_classifier", lambda **_: classify)
    CircuitBreaker.objects.create(
        name=BREAKER, consecutive_failures=2, open_until=timezone.now() + dt.timedelta(seconds=60)
    )

    assert check_next_waiting() == newer

    assert breaker.requests == []
    assert Memory.objects.get(pk=newer.pk).checked_at is not None


def test_the_detective_reads_offline_while_it_is_open(breaker: Any, workspace: Workspace, settings: Any) -> None:
    settings.MEMORYHUB_FORGETTING_RATES = {"first_day": [1.0, 1.0], "first_week": [1.0, 1.0], "older": [1.0, 1.0]}
    remember(workspace, "Deploys run on Jenkins", scope="ci", valid_from=day(8))
    remember(workspace, "Moved deploys from Jenkins to GitHub Actions", scope="ci", valid_from=day(10))
    remember(workspace, "Deploy stuck: restart the Jenkins job deploy-prod", scope="ci", valid_from=day(12))
    CircuitBreaker.objects.create(
        name=BREAKER, consecutive_failures=2, open_until=timezone.now() + dt.timedelta(seconds=60)
    )

    run = detective_run(run_id=detective_request(workspace=workspace).pk)

    assert run is not None
    assert (run.mode, run.state, run.flags_raised) == ("offline", "done", 1)
    assert breaker.requests == []


def test_without_an_llm_nothing_is_paused(settings: Any) -> None:
    settings.OPENAI_API_KEY = ""
    CircuitBreaker.objects.create(
        name=BREAKER, consecutive_failures=9, open_until=timezone.now() + dt.timedelta(seconds=60)
    )

    assert llm_paused() is None


def test_the_status_endpoint_says_while_the_llm_tier_is_paused(breaker: Any, agent: Any) -> None:
    assert agent.client.get("/api/v1/status").json()["llm"] == {"configured": True, "paused_until": None, "failures": 0}

    until = timezone.now() + dt.timedelta(minutes=5)
    CircuitBreaker.objects.update_or_create(name=BREAKER, defaults={"open_until": until, "consecutive_failures": 3})

    llm = agent.client.get("/api/v1/status").json()["llm"]
    assert llm["failures"] == 3
    paused_until = dt.datetime.fromisoformat(llm["paused_until"].replace("Z", "+00:00"))
    assert abs(paused_until - until) < dt.timedelta(milliseconds=1)  # JSON keeps milliseconds
