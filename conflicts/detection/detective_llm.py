"""The narrative detective, LLM mode: read the story, name the confusions.

Batches go out in parallel at temperature 0 with a JSON schema. Every flag is
validated: its fact ids must belong to the batch it came from, its question
must be non-empty. A malformed answer is logged and asked again once; a batch
that still has no usable answer (or whose calls failed) is reported as failed,
and the run reads it with the offline detective — a bad answer never stops a run.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from conflicts.forgetting import StoryFact
from conflicts.story import Batch
from memoryhub.llm import LLMError, chat_json, llm_admit, llm_record

logger = logging.getLogger(__name__)

PARALLEL_BATCHES = 4

SYSTEM = (
    "You are a narrative coherence detective for a team's shared AI memory. Read the chronological "
    "story and find where a new agent would get confused about the current state of things. Normal "
    "development is not confusion. Only flag genuine ambiguity that would make an agent act on wrong "
    "information."
)

INSTRUCTIONS = """Each line below is one fact an AI agent committed: id · time · scope · agent · text.
The lines are in time order, oldest first.

Find the places where an agent joining TODAY would not know what is true now:
- reversal: the story says X, later switches to Y, then later says X again as if nothing changed.
- ambiguity: two facts that both look current say different things about the same subject.
- stale: an old fact is clearly outdated by newer context but was never retired.

Do NOT flag:
- natural progression ("we did X, then improved it to Y");
- corrections, design iteration and changes of mind: the later fact is simply the current truth;
- facts about different subjects, even when they share words or numbers;
- facts from the same working session (minutes apart, same scope) that refine each other;
- anything where the most recent relevant fact settles the question.
The key test: does the most recent relevant fact settle it? If yes, do not flag.

For each confusion give the ids of the facts involved (the 8-character ids at the start of the
lines), its kind, and a yes/no question a person can answer without reading the facts, naming the
thing in dispute, e.g. "Is the public API still REST-based?". If the story is coherent, return an
empty list.

Story:
"""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["confusions"],
    "properties": {
        "confusions": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["fact_ids", "kind", "question"],
                "properties": {
                    "fact_ids": {"type": "array", "items": {"type": "string"}},
                    "kind": {"type": "string", "enum": ["reversal", "ambiguity", "stale"]},
                    "question": {"type": "string"},
                },
            },
        }
    },
}


@dataclass
class LLMFlag:
    kind: str
    facts: list[StoryFact]
    question: str


@dataclass
class LLMResult:
    flags: list[LLMFlag] = field(default_factory=list)
    tokens: int = 0
    # The batches the LLM gave no usable answer for, and why: the run reads them offline instead.
    failed: list[Batch] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # The circuit breaker was open: nothing was sent.
    paused: bool = False

    @property
    def failed_batches(self) -> int:
        return len(self.failed)


@dataclass
class BatchRead:
    flags: list[LLMFlag]
    tokens: int
    error: str | None = None
    # The endpoint itself failed (timeout, HTTP error, not JSON), as the circuit breaker counts it.
    unreachable: bool = False


def detect(batches: list[Batch]) -> LLMResult:
    """Read the batches in parallel; a batch without a usable answer is listed in ``failed``.

    Admission and outcomes go through the circuit breaker here, in the calling
    thread: the pool's threads only talk HTTP and never open a database connection.
    """
    result = LLMResult()
    if not batches:
        return result
    if not llm_admit():
        result.paused = True
        return result
    with ThreadPoolExecutor(max_workers=PARALLEL_BATCHES) as pool:
        for batch, read in zip(batches, pool.map(_read_batch, batches), strict=True):
            result.flags += read.flags
            result.tokens += read.tokens
            if read.error is not None:
                result.failed.append(batch)
                result.errors.append(read.error)
            llm_record(ok=not read.unreachable, error=read.error or "")
    return result


def _read_batch(batch: Batch) -> BatchRead:
    tokens = 0
    for attempt in (1, 2):
        try:
            answer, used = chat_json(
                system=SYSTEM,
                user=INSTRUCTIONS + batch.text,
                schema_name="story_confusions",
                schema=SCHEMA,
                breaker=False,
            )
        except LLMError as exc:
            logger.warning("detective batch of %d facts: LLM unavailable; read offline instead", len(batch.facts))
            return BatchRead([], tokens, error=str(exc), unreachable=True)
        tokens += used
        flags = parse_flags(answer, batch)
        if flags is not None:
            return BatchRead(flags, tokens)
        logger.warning("detective batch: malformed answer (attempt %d): %.300r", attempt, answer)
    return BatchRead([], tokens, error="story_confusions: malformed answer twice")


def parse_flags(answer: Any, batch: Batch) -> list[LLMFlag] | None:
    """The valid flags of an answer; None when the answer as a whole is malformed."""
    items = answer.get("confusions") if isinstance(answer, dict) else answer
    if not isinstance(items, list):
        return None
    known = batch.by_short_id()
    flags = []
    for item in items:
        if not isinstance(item, dict):
            logger.warning("detective: dropping a flag that is not an object: %.200r", item)
            continue
        ids = item.get("fact_ids")
        question = str(item.get("question") or "").strip()
        kind = item.get("kind", "ambiguity")
        if not isinstance(ids, list) or not question or kind not in ("reversal", "ambiguity", "stale"):
            logger.warning("detective: dropping a malformed flag: %.200r", item)
            continue
        unknown = [i for i in ids if str(i)[:8] not in known]
        facts = list({str(i)[:8]: known[str(i)[:8]] for i in ids if str(i)[:8] in known}.values())
        if unknown or len(facts) < 2:
            logger.warning("detective: dropping a flag naming facts outside its batch: %r", ids)
            continue
        flags.append(LLMFlag(kind=kind, facts=sorted(facts, key=lambda f: f.at), question=question[:500]))
    return flags
