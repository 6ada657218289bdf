"""How much ordinary conversation sets off: dialogue lines and extracted fact sentences through the pipeline.

Friendly chat holds nothing that contradicts anything, so every card, automatic
supersede or merge and every fact marked ``contradicted`` it produces is noise.
Each conversation is replayed into its own throw-away workspace inside a
transaction that is rolled back: its lines are committed in order, each
embedded and checked as at ingestion, then the narrative detective reads the
whole conversation. Sources:

- ``shared/eval/decode-human-bot.jsonl`` (DECODE): dialogues as turns, only the
  ones not marked ``is_contradiction``; the turns are a minute apart.
- ``training/data/chat-own.txt``: the project's own multi-session chats, as
  turns (``user:``/``bot:`` lines, sessions days apart) and as the fact
  sentences an extractor would keep (``fact DATE | sentence``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from conflicts.models import ConflictCard
from conflicts.narrative import flag_to_card
from memories.models import Memory, Reliability
from memoryhub.errors import InvalidInput
from training.stories import automatic_decisions, eval_workspace, ingest, narrative_flags

# The bar of issue 21 for held-out friendly chat.
BAR = {"cards_per_1000": 10.0, "automatic_per_1000": 10.0, "contradicted_percent": 2.0}
DECODE_START = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC)

# A frozen split for tuning (issue 21): a conversation belongs to one half by a hash of its id, so
# rules are tuned on "tune" and only the aggregate figures of "validation" are read.
SPLITS = ("tune", "validation")


def split_of(conversation_id: str) -> str:
    """``tune`` or ``validation`` for good: the parity of the first 32 bits of the id's SHA-256."""
    return SPLITS[int(hashlib.sha256(conversation_id.encode()).hexdigest()[:8], 16) % 2]


def in_split(conversations: list[Conversation], split: str) -> list[Conversation]:
    """The conversations of one half (``all``: every one)."""
    return conversations if split == "all" else [c for c in conversations if split_of(c.id) == split]


_SESSION = re.compile(r"^--\s+(\d{4}-\d\d-\d\d)\s+(\d\d:\d\d)$")
_TURN = re.compile(r"^(user|bot):\s*(.+)$")
_FACT = re.compile(r"^fact\s+(\d{4}-\d\d-\d\d)\s*\|\s*(.+)$")


@dataclass(frozen=True)
class Line:
    at: dt.datetime
    agent: str
    text: str


@dataclass
class Conversation:
    id: str
    turns: list[Line] = field(default_factory=list)
    facts: list[Line] = field(default_factory=list)


def parse_own_chats(text: str) -> list[Conversation]:
    """The notation of ``chat-own.txt``: ``== id title``, ``-- DATE HH:MM``, ``user:``/``bot:``, ``fact DATE | …``."""
    conversations: list[Conversation] = []
    session: dt.datetime | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("=="):
            conversations.append(Conversation(id=line[2:].split()[0]))
            session = None
            continue
        if not conversations:
            raise InvalidInput(f"line {number}: a line before the first conversation")
        conversation = conversations[-1]
        if match := _SESSION.match(line):
            session = dt.datetime.fromisoformat(f"{match[1]}T{match[2]}:00+00:00")
        elif match := _TURN.match(line):
            if session is None:
                raise InvalidInput(f"line {number}: a turn before the first session")
            # Turns of one session a minute apart, in the order written.
            at = session + dt.timedelta(minutes=len([t for t in conversation.turns if t.at >= session]))
            conversation.turns.append(Line(at=at, agent=match[1], text=match[2]))
        elif match := _FACT.match(line):
            day = dt.datetime.fromisoformat(f"{match[1]}T12:00:00+00:00")
            at = day + dt.timedelta(minutes=len([f for f in conversation.facts if f.at >= day]))
            conversation.facts.append(Line(at=at, agent="extractor", text=match[2]))
        else:
            raise InvalidInput(f"line {number}: not a session, turn or fact line: {line!r}")
    return conversations


def read_decode(path: Path, *, limit: int | None = None, split: str = "all") -> list[Conversation]:
    """DECODE dialogues not marked as contradicting, as turns a minute apart, at most ``limit`` of one split."""
    conversations = []
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            dialogue = json.loads(raw)
            if dialogue["is_contradiction"]:
                continue
            humans = {k for k, agent in dialogue["agents"].items() if agent.get("is_human")}
            turns = [
                Line(
                    at=DECODE_START + dt.timedelta(minutes=index),
                    agent="human" if str(turn["agent_id"]) in humans else "bot",
                    text=turn["text"],
                )
                for index, turn in enumerate(dialogue["turns"])
                if turn["text"].strip()
            ]
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise InvalidInput(f"{path}:{number}: not a DECODE dialogue ({exc})") from exc
        conversation = Conversation(id=str(dialogue.get("conversation_id", number)), turns=turns)
        if split != "all" and split_of(conversation.id) != split:
            continue
        conversations.append(conversation)
        if limit is not None and len(conversations) >= limit:
            break
    return conversations


@dataclass
class SetReport:
    """What one set of conversations (as turns, or as facts) set off."""

    conversations: int = 0
    facts: int = 0
    cards: int = 0
    supersedes: int = 0
    merges: int = 0
    contradicted: int = 0
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)
    example_limit: int = 12

    def as_json(self) -> dict[str, Any]:
        per_1000 = 1000 / self.facts if self.facts else 0.0
        return {
            "conversations": self.conversations,
            "facts": self.facts,
            "cards": self.cards,
            "supersedes": self.supersedes,
            "merges": self.merges,
            "contradicted": self.contradicted,
            "cards_per_1000": round(self.cards * per_1000, 2),
            "automatic_per_1000": round((self.supersedes + self.merges) * per_1000, 2),
            "contradicted_percent": round(100 * self.contradicted / self.facts, 2) if self.facts else 0.0,
            "seconds": round(self.seconds, 1),
            "examples": self.examples,
        }


def evaluate_set(conversations: list[tuple[str, list[Line]]], *, examples: int | None = None) -> SetReport:
    """Replay each conversation; keep ``examples`` cards and decisions (default 12: enough to see the noise)."""
    report = SetReport() if examples is None else SetReport(example_limit=examples)
    started = time.monotonic()
    for conversation_id, lines in conversations:
        if lines:
            _replay_counted(conversation_id, lines, report)
    report.seconds = time.monotonic() - started
    return report


class _Rollback(Exception):
    pass


def _replay_counted(conversation_id: str, lines: list[Line], report: SetReport) -> None:
    try:
        with transaction.atomic():
            _replay(conversation_id, lines, report)
            raise _Rollback
    except _Rollback:
        pass


def _replay(conversation_id: str, lines: list[Line], report: SetReport) -> None:
    workspace = eval_workspace(f"chat {conversation_id}")
    for line in sorted(lines, key=lambda item: item.at):
        ingest(workspace, line.text, at=line.at, agent=line.agent, scope="chat")
    for flag in narrative_flags(workspace, "offline"):
        flag_to_card(workspace=workspace, flag=flag)
    texts = dict(Memory.objects.filter(workspace=workspace).values_list("pk", "text"))
    cards = list(ConflictCard.objects.filter(workspace=workspace).prefetch_related("card_facts__memory"))
    decisions = automatic_decisions(workspace)
    report.conversations += 1
    report.facts += len(texts)
    report.cards += len(cards)
    report.supersedes += sum(action == "supersede" for action, _, _ in decisions)
    report.merges += sum(action == "merge" for action, _, _ in decisions)
    report.contradicted += Memory.objects.filter(workspace=workspace, reliability=Reliability.CONTRADICTED).count()
    for card in cards:
        if len(report.examples) < report.example_limit:
            report.examples.append(
                f"{conversation_id} {card.kind} card ({card.detector}): "
                + " | ".join(_described(f.memory) for f in card.card_facts.all())
            )
    for action, retired, kept in decisions:
        if len(report.examples) < report.example_limit:
            report.examples.append(f"{conversation_id} {action}: {texts[retired]!r} -> {texts[kept]!r}")


def _described(memory: Memory) -> str:
    """``agent: text [entity / attribute]`` — who said it and what the hub read it to be about."""
    return f"{memory.agent}: {memory.text} [{memory.subject_entity or '?'} / {memory.subject_attribute or '?'}]"
