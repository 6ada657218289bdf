"""Every MCP tool and resource through the SDK's own client, over streamable HTTP and over stdio.

The tools call the services the REST API calls: where an operation only reads,
the tool's answer is compared with the REST answer for the same request.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from django.test import Client as DjangoClient
from mcp import Client
from mcp.shared.exceptions import MCPError

from conflicts.detection.verdict import Relation
from conflicts.services import conflict_resolve
from memories.audit import Actor
from memories.models import Memory
from tests.conflicts.scripted import scripted
from tests.factories import run_async
from tests.mcp.conftest import Agent, Connect
from tests.memories.recall_helpers import day, remember

READ_TOOLS = {"recall", "context", "check_action", "find_conflicts", "neighbors", "surface_uncertainties"}
WRITE_TOOLS = {"remember", "supersede", "restore", "link", "unlink"}


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool's structured answer; fails the test on a tool error."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}: {result.content}"
    # The same JSON travels as text, for clients that read only that.
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == result.structured_content
    answer: dict[str, Any] = result.structured_content
    return answer


async def error(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool error's body: the REST API's ``{detail, code}``."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} succeeded: {result.structured_content}"
    body: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert body == result.structured_content
    return body


def rest(agent: Agent, method: str, path: str, body: Any = None) -> Any:
    client = DjangoClient(HTTP_AUTHORIZATION=f"Bearer {agent.key}")
    if method == "GET":
        return client.get(f"/api/v1{path}").json()
    return client.post(f"/api/v1{path}", data=json.dumps(body), content_type="application/json").json()


async def in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Django's test client and ORM are synchronous: called from the test's event loop, they run in a thread."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args))


def open_card_between(agent: Agent, older_text: str, newer_text: str) -> tuple[Memory, Memory]:
    """Two facts of the agent's workspace that detection found contradictory: an open card and uncertainty."""
    older = remember(agent.workspace, older_text, valid_from=day(1))
    newer = remember(agent.workspace, newer_text, valid_from=day(2))
    verdict = scripted(Relation.TRUE_CONTRADICTION)
    conflict_resolve(older=older, newer=newer, verdict=verdict, context="ingestion", actor=Actor.system("detector"))
    return older, newer


def test_a_key_lists_the_tools_its_scopes_allow(connect: Connect, agent: Agent) -> None:
    async def listed() -> dict[str, Any]:
        async with connect(agent.key) as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    tools = run_async(listed)
    assert set(tools) == READ_TOOLS | WRITE_TOOLS  # a new key reads and writes; answering needs its own scope
    for tool in tools.values():
        assert len(tool.description or "") > 40
        assert tool.input_schema["type"] == "object"
    assert tools["recall"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert tools["remember"].annotations.read_only_hint is False  # type: ignore[union-attr]
    # The input schema is the REST request schema's: fields, defaults and the LLM-facing descriptions.
    remember_schema = tools["remember"].input_schema
    assert remember_schema["required"] == ["text"]
    assert remember_schema["properties"]["on_conflict"]["enum"] == ["ignore", "warn", "supersede", "raise"]
    assert set(tools["supersede"].input_schema["required"]) == {"by", "memory_id"}

    agent.grant("answer")
    assert set(run_async(listed)) == READ_TOOLS | WRITE_TOOLS | {"answer_conflict"}
    agent.only("read")
    assert set(run_async(listed)) == READ_TOOLS


def test_every_tool_and_resource_answers(connect: Connect, agent: Agent) -> None:
    agent.grant("answer")
    vegetarian, steak = open_card_between(agent, "The user is vegetarian", "The user eats steak every day")
    card = vegetarian.card_facts.get().card  # type: ignore[attr-defined]
    check_ids = {"memory_ids": [str(vegetarian.pk)]}

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with connect(agent.key) as client:
            jenkins = await call(client, "remember", {"text": "Deploys run on Jenkins", "key": "deploy_tool"})
            assert jenkins["action"] == "stored"
            assert jenkins["memory"]["agent"] == "planner"  # signed with the key's agent name
            actions = await call(client, "remember", {"text": "Deploys run on GitHub Actions", "tags": ["CI"]})
            assert actions["memory"]["tags"] == ["ci"]

            hits = (await call(client, "recall", {"query": "Jenkins deploys"}))["hits"]
            assert hits[0]["memory"]["id"] == jenkins["id"]

            context = await call(
                client, "context", {"recent_messages": [{"role": "user", "content": "How do we deploy?"}]}
            )
            assert context["budget_tokens"] == 1500

            check = await call(client, "check_action", {"memory_ids": [str(vegetarian.pk)]})
            assert check["proceed"] is False  # the fact is disputed by the open card
            seen["check_action"] = (check, await in_thread(rest, agent, "POST", "/check-action", check_ids))

            link = await call(client, "link", {"src": jenkins["id"], "dst": actions["id"], "rel": "related"})
            assert link["created"] is True
            hood = await call(client, "neighbors", {"memory_id": jenkins["id"]})
            assert [n["memory"]["id"] for n in hood["neighbors"]] == [actions["id"]]
            assert await call(client, "unlink", {"link_id": link["link"]["id"]}) == {
                "deleted": True,
                "link_id": link["link"]["id"],
            }
            assert (await call(client, "neighbors", {"memory_id": jenkins["id"]}))["neighbors"] == []

            superseded = await call(
                client, "supersede", {"memory_id": jenkins["id"], "by": actions["id"], "reason": "moved CI"}
            )
            assert superseded["changed"] is True
            assert superseded["memory"]["superseded_by"] == actions["id"]
            chain = json.loads(
                (await client.read_resource(f"memoryhub://memories/{jenkins['id']}/chain")).contents[0].text
            )  # type: ignore[union-attr]
            assert chain["head"] == actions["id"]
            assert [m["id"] for m in chain["chain"]] == [jenkins["id"], actions["id"]]
            restored = await call(client, "restore", {"memory_id": jenkins["id"]})
            assert restored["changed"] is True
            assert restored["memory"]["superseded_by"] is None

            resource = await client.read_resource(f"memoryhub://memories/{steak.pk}")
            memory = json.loads(resource.contents[0].text)  # type: ignore[union-attr]
            seen["memory"] = (memory, await in_thread(rest, agent, "GET", f"/memories/{steak.pk}"))
            cards = await call(client, "find_conflicts", {"state": "open"})
            seen["find_conflicts"] = (cards, await in_thread(rest, agent, "GET", "/conflicts?state=open"))

            surfaced = (await call(client, "surface_uncertainties", {"topic": "what the user eats"}))["surfaced"]
            assert [s["uncertainty"]["id"] for s in surfaced] == [str(card.uncertainty_id)]

            answered = await call(client, "answer_conflict", {"card_id": str(card.pk), "answer": "both"})
            assert answered["card"]["state"] != "open"
            assert answered["answer"] == "both"
        return seen

    seen = run_async(scenario)
    # Reads answer exactly what the REST API answers for the same request at the same moment.
    mcp_check, rest_check = seen["check_action"]
    assert mcp_check == rest_check
    mcp_memory, rest_memory = seen["memory"]
    assert mcp_memory == rest_memory
    mcp_cards, rest_cards = seen["find_conflicts"]
    assert mcp_cards == {"cards": rest_cards}
    assert [f["id"] for f in mcp_cards["cards"][0]["facts"]] == [str(vegetarian.pk), str(steak.pk)]


def test_errors_are_tool_errors_with_the_api_s_detail_and_code(connect: Connect, agent: Agent) -> None:
    fact = remember(agent.workspace, "The office is in Berlin")
    missing = "00000000-0000-4000-8000-000000000000"

    async def scenario() -> None:
        async with connect(agent.key) as client:
            assert await error(client, "remember", {"text": "   "}) == {
                "detail": [
                    {"loc": ["arguments", "text"], "msg": "Value error, text must not be empty", "type": "value_error"}
                ],
                "code": "invalid",
            }
            unknown_field = await error(client, "recall", {"query": "office", "colour": "blue"})
            assert unknown_field["code"] == "invalid"
            assert unknown_field["detail"][0]["loc"] == ["arguments", "colour"]
            assert (await error(client, "check_action", {}))["detail"][0]["loc"] == ["arguments", "memory_ids"]

            assert await error(client, "restore", {"memory_id": missing}) == {
                "detail": "no memory with this id in the workspace",
                "code": "not_found",
            }
            # A memory named as an argument to act with is a bad value of that argument, as in REST (422).
            assert await error(client, "supersede", {"memory_id": str(fact.pk), "by": missing}) == {
                "detail": [
                    {
                        "loc": ["arguments", "by"],
                        "msg": "no memory with this id in the workspace",
                        "type": "value_error",
                    }
                ],
                "code": "invalid",
            }
            assert (await error(client, "unlink", {"link_id": 999_999}))["code"] == "not_found"
            assert (await error(client, "no_such_tool", {}))["code"] == "not_found"
            # Without the answer scope the tool is not listed, and calling it anyway is refused.
            assert await error(client, "answer_conflict", {"card_id": missing, "answer": "yes"}) == {
                "detail": "this agent key lacks the 'answer' scope (it has: read, write); ask a workspace admin",
                "code": "forbidden",
            }
            with pytest.raises(MCPError) as unknown_memory:
                await client.read_resource(f"memoryhub://memories/{missing}")
            assert unknown_memory.value.error.data == {
                "detail": "no memory with this id in the workspace",
                "code": "not_found",
            }
            with pytest.raises(MCPError):
                await client.read_resource("memoryhub://elsewhere/1")

    run_async(scenario)
    # The REST API answers the same for the same mistakes.
    assert (
        rest(agent, "POST", f"/memories/{missing}/restore", {})["detail"] == "no memory with this id in the workspace"
    )


def test_a_read_only_key_cannot_write(connect: Connect, agent: Agent) -> None:
    agent.only("read")

    async def scenario() -> dict[str, Any]:
        async with connect(agent.key) as client:
            return await error(client, "remember", {"text": "The office is in Berlin"})

    assert run_async(scenario) == {
        "detail": "this agent key lacks the 'write' scope (it has: read); ask a workspace admin",
        "code": "forbidden",
    }
    assert not Memory.objects.exists()
