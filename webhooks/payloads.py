"""What each event's POST says: the MemoryHub JSON body, or a Slack-compatible ``{text, blocks}``.

Built once per event and format (every hook of that format gets the same
bytes), from rows read after the change committed.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from conflicts.models import Answer, ConflictCard
from memories.event_kinds import event_label
from memories.models import Event
from webhooks.models import EventType, PayloadFormat
from workspaces.models import Workspace


def event_data(event_type: str, workspace: Workspace, **ids: Any) -> dict[str, Any] | None:
    """The ``data`` of an event, or None when what it names is gone (deleted before delivery was queued)."""
    if event_type == EventType.CARD_OPENED:
        card = _card(workspace, ids["card_id"])
        return None if card is None else {"card": _card_out(card), "url": _link("review:card", workspace, card.pk)}
    if event_type == EventType.CARD_ANSWERED:
        card = _card(workspace, ids["card_id"])
        answer = Answer.objects.filter(pk=ids["answer_id"]).select_related("user", "agent_key").first()
        if card is None or answer is None:
            return None
        by = answer.user.get_username() if answer.user else (answer.agent_key.name if answer.agent_key else "")
        return {
            "card": _card_out(card),
            "answer": answer.choice,
            "current_fact": str(answer.current_memory_id) if answer.current_memory_id else None,
            "note": answer.note,
            "answered_by": by,
            "event_id": ids["event_id"],
            "url": _link("review:card", workspace, card.pk),
        }
    if event_type == EventType.DECISION_MADE:
        event = Event.objects.filter(pk=ids["event_id"], workspace=workspace).select_related("memory").first()
        if event is None:
            return None
        return {
            "decision": {
                "event_id": event.pk,
                "verb": event.verb,
                "label": event_label(event.verb),
                "reason": event.reason,
                "memory": {"id": str(event.memory.pk), "text": event.memory.text} if event.memory else None,
                "created_at": event.created_at.isoformat(),
            },
            "url": _link("review:decisions", workspace),
        }
    if event_type == EventType.JOB_FAILED:
        return {"job": ids["job"], "subject": ids["subject"], "error": ids["error"]}
    raise ValueError(f"unknown webhook event {event_type!r}")


def render(event_type: str, workspace: Workspace, data: dict[str, Any], payload_format: str) -> str:
    """The body as sent: compact JSON text, signed as these exact bytes."""
    if payload_format == PayloadFormat.SLACK:
        body: dict[str, Any] = _slack(event_type, workspace, data)
    else:
        body = {
            "type": event_type,
            "created_at": timezone.now().isoformat(),
            "workspace": {"slug": workspace.slug, "name": workspace.name},
            "data": data,
        }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def _slack(event_type: str, workspace: Workspace, data: dict[str, Any]) -> dict[str, Any]:
    if event_type == EventType.CARD_OPENED:
        card = data["card"]
        facts = "\n".join(f"• {_escape(fact['text'])}" for fact in card["facts"])
        text = f"New conflict card in {workspace.name}: {card['question']}"
        detail = f"*{_escape(card['question'])}* ({card['severity']})\n{facts}"
    elif event_type == EventType.CARD_ANSWERED:
        card = data["card"]
        text = f"{data['answered_by'] or 'Someone'} answered {data['answer']!r}: {card['question']}"
        detail = f"*{_escape(card['question'])}*\nAnswered *{data['answer']}* by {_escape(data['answered_by'])}"
    elif event_type == EventType.DECISION_MADE:
        decision = data["decision"]
        subject = decision["memory"]["text"] if decision["memory"] else ""
        text = f"{decision['label']} in {workspace.name}"
        detail = f"*{_escape(decision['label'])}*: {_escape(subject)}\n_{_escape(decision['reason'])}_"
    else:
        text = f"A {data['job']} job failed in {workspace.name}"
        detail = f"*{_escape(text)}* ({_escape(data['subject'])})\n```{_escape(data['error'][:500])}```"
    blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": detail[:3000]}}]
    if data.get("url"):
        blocks.append(
            {"type": "context", "elements": [{"type": "mrkdwn", "text": f"<{data['url']}|Open in MemoryHub>"}]}
        )
    return {"text": text, "blocks": blocks}


def _escape(text: str) -> str:
    # Slack's mrkdwn reads these three as control characters.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _card(workspace: Workspace, card_id: Any) -> ConflictCard | None:
    return ConflictCard.objects.filter(pk=card_id, workspace=workspace).first()


def _card_out(card: ConflictCard) -> dict[str, Any]:
    facts = card.card_facts.select_related("memory").order_by("position")
    return {
        "id": str(card.pk),
        "kind": card.kind,
        "question": card.question,
        "severity": card.severity,
        "state": card.state,
        "detector": card.detector,
        "asked_memory": str(card.asked_memory_id) if card.asked_memory_id else None,
        "facts": [
            {
                "id": str(f.memory.pk),
                "text": f.memory.text,
                "agent": f.memory.agent,
                "recorded_at": f.memory.recorded_at.isoformat(),
            }
            for f in facts
        ],
        "created_at": card.created_at.isoformat(),
        "answered_at": card.answered_at.isoformat() if card.answered_at else None,
    }


def _link(view: str, workspace: Workspace, *args: Any) -> str:
    """An absolute dashboard link when ``MEMORYHUB_PUBLIC_URL`` is set, else the path."""
    try:
        path = reverse(view, args=[workspace.slug, *args])
    except NoReverseMatch:
        return ""
    return settings.MEMORYHUB_PUBLIC_URL.rstrip("/") + path
