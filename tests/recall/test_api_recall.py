from __future__ import annotations

from typing import Any

import pytest

from conflicts.models import Uncertainty
from memories.models import Memory
from tests.conftest import AgentClient
from tests.memories.recall_helpers import remember


def test_it_recalls_with_score_parts_and_flags(agent: AgentClient) -> None:
    fact = remember(agent.workspace, "Deploys are frozen during the last week of December")

    response = agent.post("/recall", {"query": "deploy freeze in december", "k": 3})

    assert response.status_code == 200
    [hit] = response.json()
    assert hit["memory"]["id"] == str(fact.pk)
    assert set(hit["parts"]) == {"cosine", "lexical", "recency", "importance", "confidence", "reliability_factor"}
    assert hit["reliability"] == "reliable"
    assert hit["disputed"] is False
    assert hit["contradicted_by"] == []


def test_an_empty_workspace_recalls_an_empty_list(agent: AgentClient) -> None:
    response = agent.post("/recall", {"query": "anything"})

    assert response.status_code == 200
    assert response.json() == []


def test_it_never_returns_another_workspaces_facts(agent: AgentClient, other_agent: AgentClient) -> None:
    remember(other_agent.workspace, "Globex's secret launch date is March 3")

    assert agent.post("/recall", {"query": "secret launch date"}).json() == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "k": 101}, "k"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": "x", "kind": "rumour"}, "kind"),
        ({"query": "x", "as_of": "the day before yesterday"}, "as_of"),
        ({"query": "x", "min_confidence": 1.5}, "min_confidence"),
        ({"query": "x", "colour": "blue"}, "colour"),
        ({"query": "x", "weights": {"cosine": -1}}, "cosine"),
        ({"query": "x", "expand": {"rels": ["friend_of"]}}, "rels"),
    ],
)
def test_it_rejects_bad_recall_input(agent: AgentClient, field_errors: Any, body: dict[str, Any], field: str) -> None:
    assert field in field_errors(agent.post("/recall", body))


def test_all_zero_weights_are_refused(agent: AgentClient, field_errors: Any) -> None:
    zero = {"cosine": 0, "lexical": 0, "recency": 0, "importance": 0, "confidence": 0}

    errors = field_errors(agent.post("/recall", {"query": "x", "weights": zero}))

    assert "weight" in errors["weights"]


def test_workspace_weights_apply_and_a_call_overrides_them(agent: AgentClient) -> None:
    remember(agent.workspace, "Incident reviews are blameless", importance=1.0)
    agent.workspace.config = {"recall_weights": {"cosine": 0, "lexical": 0, "recency": 0, "confidence": 0}}
    agent.workspace.save()

    [hit] = agent.post("/recall", {"query": "incident reviews"}).json()
    assert hit["score"] == pytest.approx(0.05)  # importance alone, at its default weight

    [hit] = agent.post("/recall", {"query": "incident reviews", "weights": {"importance": 0.5}}).json()
    assert hit["score"] == pytest.approx(0.5)


def test_min_confidence_defaults_to_explicit_recall_threshold(agent: AgentClient) -> None:
    remember(agent.workspace, "The user might like jazz", source="inferred", confidence=0.25)
    remember(agent.workspace, "The user likes jazz a bit", source="inferred", confidence=0.35)

    texts = [h["memory"]["text"] for h in agent.post("/recall", {"query": "jazz", "diversity": False}).json()]

    assert texts == ["The user likes jazz a bit"]


def test_context_fills_the_budget_in_priority_order(agent: AgentClient) -> None:
    remember(agent.workspace, "The user is allergic to peanuts", kind="trait", importance=0.9)
    remember(agent.workspace, "Last week the user cooked a Thai curry", kind="episode")
    body = {
        "recent_messages": [
            {"role": "user", "content": "an old message that should fall out of the budget " * 20},
            {"role": "user", "content": "What should I cook tonight?"},
            {"role": "assistant", "content": "Maybe a curry? Any allergies?"},
        ],
        "tool_results": ["search_memory: the user owns a wok"],
        "budget_tokens": 60,
    }

    result = agent.post("/context", body).json()

    assert [m["content"] for m in result["messages"]] == [
        "What should I cook tonight?",
        "Maybe a curry? Any allergies?",
    ]
    assert result["dropped"]["messages"] == 1
    assert result["tool_results"][0]["content"].startswith("search_memory")
    assert result["used_tokens"] <= 60
    assert result["used_tokens"] == sum(
        part["tokens"] for key in ("messages", "tool_results", "memories") for part in result[key]
    )
    assert "curry" in result["query"]
    texts = {m["memory"]["text"] for m in result["memories"]}
    assert texts <= {"The user is allergic to peanuts", "Last week the user cooked a Thai curry"}
    assert texts


def test_context_with_a_zero_budget_returns_nothing(agent: AgentClient) -> None:
    result = agent.post("/context", {"recent_messages": [{"content": "hi"}], "budget_tokens": 0}).json()

    assert result["used_tokens"] == 0
    assert result["messages"] == []
    assert result["dropped"]["messages"] == 1


def test_context_rejects_a_negative_budget(agent: AgentClient, field_errors: Any) -> None:
    errors = field_errors(agent.post("/context", {"recent_messages": [], "budget_tokens": -1}))

    assert "budget_tokens" in errors


def test_check_action_lets_a_reliable_memory_through(agent: AgentClient) -> None:
    fact = remember(agent.workspace, "Invoices go to billing@acme.test")

    result = agent.post("/check-action", {"memory_ids": [str(fact.pk)]}).json()

    assert result["proceed"] is True
    assert result["results"][0]["adjusted_confidence"] == pytest.approx(fact.confidence)


def test_check_action_stops_on_a_disputed_memory(agent: AgentClient) -> None:
    old = remember(agent.workspace, "Invoices go to billing@acme.test")
    new = remember(agent.workspace, "Invoices go to finance@acme.test")
    Memory.objects.filter(pk__in=[old.pk, new.pk]).update(reliability="contradicted")
    Uncertainty.objects.create(
        workspace=agent.workspace,
        memory_a=old,
        memory_a_kind="fact",
        memory_b=new,
        memory_b_kind="fact",
        uncertainty_type="contradiction",
        severity="high",
        detection_context="ingestion",
    )

    result = agent.post("/check-action", {"memory_ids": [str(old.pk)]}).json()

    assert result["proceed"] is False
    [check] = result["results"]
    assert check["adjusted_confidence"] == pytest.approx(old.confidence * 0.6)
    assert "finance@acme.test" in check["warning"]
    assert "Which one is true now?" in check["clarification"]
    assert check["conflicting"][0]["id"] == str(new.pk)


def test_check_action_flags_an_unverified_inference(agent: AgentClient) -> None:
    guess = remember(agent.workspace, "The customer prefers calls to email", source="inferred")
    Memory.objects.filter(pk=guess.pk).update(reliability="uncertain")

    [check] = agent.post("/check-action", {"memory_ids": [str(guess.pk)]}).json()["results"]

    assert check["proceed"] is False
    assert check["clarification"].startswith("Can you confirm")


def test_check_action_rejects_unknown_ids(agent: AgentClient, other_agent: AgentClient, field_errors: Any) -> None:
    foreign = remember(other_agent.workspace, "Globex ships on Tuesdays")

    errors = field_errors(agent.post("/check-action", {"memory_ids": [str(foreign.pk)]}))

    assert str(foreign.pk) in errors["memory_ids"]
    assert field_errors(agent.post("/check-action", {"memory_ids": []}))


@pytest.mark.parametrize("lexical", ["postgres", "local_bm25"])
@pytest.mark.parametrize("query", ["!!!", "'", "(((", ":*", "&|!<->", "the"])
def test_a_query_without_words_gets_no_lexical_match_but_still_dense_hits(
    agent: AgentClient, lexical: str, query: str
) -> None:
    fact = remember(agent.workspace, "Deploys are frozen during the last week of December")

    response = agent.post("/recall", {"query": query, "lexical": lexical, "min_confidence": 0})

    assert response.status_code == 200, response.content
    [hit] = response.json()
    assert hit["memory"]["id"] == str(fact.pk)
    assert hit["parts"]["lexical"] == 0


def test_the_postgres_backend_still_matches_words(agent: AgentClient) -> None:
    fact = remember(agent.workspace, "Deploys are frozen during the last week of December")
    remember(agent.workspace, "The office dog is called Biscuit")

    hits = agent.post("/recall", {"query": "december freeze?!", "lexical": "postgres"}).json()

    assert [h["parts"]["lexical"] for h in hits if h["memory"]["id"] == str(fact.pk)] == [1.0]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/recall", {"query": "x", "k": True}, "k"),
        ("/recall", {"query": "x", "k": 5.0}, "k"),
        ("/recall", {"query": "x", "min_confidence": False}, "min_confidence"),
        ("/recall", {"query": "x", "include_superseded": 1}, "include_superseded"),
        ("/recall", {"query": "x", "diversity": "no"}, "diversity"),
        ("/recall", {"query": "x", "weights": {"cosine": True}}, "cosine"),
        ("/recall", {"query": "x", "expand": {"depth": True}}, "depth"),
        ("/context", {"recent_messages": [{"content": "hi"}], "episodes": False}, "episodes"),
        ("/context", {"recent_messages": [{"content": "hi"}], "facts": "3"}, "facts"),
        ("/context", {"recent_messages": [{"content": "hi"}], "budget_tokens": 1e3}, "budget_tokens"),
        ("/uncertainties/surface", {"topic": "deploys", "limit": True}, "limit"),
    ],
)
def test_a_bool_or_string_where_a_number_belongs_is_a_422(
    agent: AgentClient, field_errors: Any, path: str, body: dict[str, Any], field: str
) -> None:
    assert field in field_errors(agent.post(path, body))
