from __future__ import annotations

import json
from typing import Any

import pytest

from conflicts.detection.llm import escalate_unsure
from conflicts.detection.verdict import Relation, Verdict
from memories.models import Memory
from tests.conflicts.scripted import unsure
from tests.memories.recall_helpers import day, remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(workspace: Workspace) -> tuple[Memory, Memory]:
    return (
        remember(workspace, "Ana hates mornings", valid_from=day(1)),
        remember(workspace, "Ana goes running at 6am every day", valid_from=day(2)),
    )


def answer(*items: dict[str, Any]) -> str:
    return json.dumps({"verdicts": list(items)})


FIGURATIVE = {"pair": 0, "relation": "figurative", "current": None, "confidence": 0.8, "reasoning": "hyperbole"}


def test_an_unsure_pair_gets_the_llms_verdict_and_reasoning(llm: Any, pair: tuple[Memory, Memory]) -> None:
    llm.script(answer(FIGURATIVE))

    [verdict] = escalate_unsure([pair], [unsure()])

    assert (verdict.relation, verdict.tier, verdict.reasoning) == (Relation.FIGURATIVE, "llm", "hyperbole")
    request = llm.requests[0]["body"]
    assert request["temperature"] == 0
    assert request["model"] == "gpt-4o-mini"
    assert request["response_format"]["type"] == "json_schema"
    assert "Ana hates mornings" in request["messages"][1]["content"]


def test_a_sure_pair_is_not_sent(llm: Any, pair: tuple[Memory, Memory]) -> None:
    sure = Verdict(relation=Relation.DUPLICATE, probability=0.95, tier="classifier")

    assert escalate_unsure([pair], [sure]) == [sure]
    assert llm.requests == []


@pytest.mark.parametrize(
    "replies",
    [
        ("not json at all", "still not json"),
        (500, 503),
        (answer({"pair": 7, **{k: v for k, v in FIGURATIVE.items() if k != "pair"}}),),
        (answer({"pair": 0, "relation": "vibes", "current": None, "confidence": 1, "reasoning": ""}),),
        (json.dumps({"something": "else"}),),
    ],
    ids=["malformed-json", "http-errors", "hallucinated-pair", "unknown-relation", "wrong-shape"],
)
def test_bad_llm_output_leaves_the_offline_verdict(llm: Any, pair: tuple[Memory, Memory], replies: tuple) -> None:
    llm.script(*replies)
    offline = unsure()

    assert escalate_unsure([pair], [offline]) == [offline]


def test_malformed_output_is_retried_once(llm: Any, pair: tuple[Memory, Memory]) -> None:
    llm.script("{oops", answer(FIGURATIVE))

    [verdict] = escalate_unsure([pair], [unsure()])

    assert verdict.tier == "llm"
    assert len(llm.requests) == 2


def test_a_timeout_leaves_the_offline_verdict(llm: Any, pair: tuple[Memory, Memory]) -> None:
    llm.script(("sleep", 1.5), ("sleep", 1.5))
    offline = unsure()

    assert escalate_unsure([pair], [offline]) == [offline]


def test_without_a_key_the_tier_is_off(pair: tuple[Memory, Memory]) -> None:
    from conflicts.detection.pipeline import _escalate

    offline = unsure()
    assert _escalate([pair], [offline]) == [offline]
