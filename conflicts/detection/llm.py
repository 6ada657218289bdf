"""Tier 2: ask an LLM about the pairs the offline classifier is unsure of.

Only runs when an LLM is configured (``OPENAI_API_KEY``). One batched,
temperature-0 request with a JSON schema; every item is validated (the pair
index must exist, the relation must be known). Whatever fails — timeout, HTTP
error, malformed or hallucinated output — leaves the offline verdict standing,
and while the LLM's circuit breaker is open (``memoryhub/llm.py``) nothing is
sent at all. The pipeline calls this tier with no transaction open.
"""

from __future__ import annotations

import logging
from typing import Any

from conflicts.detection.verdict import Relation, Verdict
from memories.models import Memory
from memoryhub.llm import LLMError, LLMPaused, chat_json

logger = logging.getLogger(__name__)

# Below this tier-1 probability a pair goes to the LLM.
UNSURE_BELOW = 0.7
MAX_PAIRS_PER_CALL = 16

SYSTEM = (
    "You judge pairs of statements from a team's shared memory. For each pair, statement A was "
    "recorded before statement B. Decide their relation:\n"
    "- temporal_change: both were true at their own time; the situation changed (moved, switched, "
    "upgraded, no longer). Say which one is current.\n"
    "- true_contradiction: they cannot both be true about the same subject at the same time.\n"
    "- duplicate: they say the same thing.\n"
    "- compatible: both can be true (different subjects, different aspects, one implies the other).\n"
    "- context_dependent: true in different situations (at work vs at home, for one team vs another).\n"
    "- figurative: one is a figure of speech or exaggeration, not a literal claim.\n"
    "Only facts about the same subject can contradict. Give a short reason."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["verdicts"],
    "properties": {
        "verdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["pair", "relation", "current", "confidence", "reasoning"],
                "properties": {
                    "pair": {"type": "integer"},
                    "relation": {"type": "string", "enum": [r.value for r in Relation]},
                    "current": {"type": ["string", "null"], "enum": ["A", "B", None]},
                    "confidence": {"type": "number"},
                    "reasoning": {"type": "string"},
                },
            },
        }
    },
}


def escalate_unsure(pairs: list[tuple[Memory, Memory]], verdicts: list[Verdict]) -> list[Verdict]:
    """Replace unsure offline verdicts by the LLM's, where it gives a valid answer."""
    unsure = [i for i, v in enumerate(verdicts) if v.probability < UNSURE_BELOW]
    result = list(verdicts)
    for start in range(0, len(unsure), MAX_PAIRS_PER_CALL):
        batch = unsure[start : start + MAX_PAIRS_PER_CALL]
        for index, verdict in _ask([pairs[i] for i in batch]).items():
            result[batch[index]] = verdict
    return result


def _ask(pairs: list[tuple[Memory, Memory]]) -> dict[int, Verdict]:
    lines = []
    for number, (a, b) in enumerate(pairs):
        lines.append(
            f"Pair {number}:\n  A ({a.valid_from:%Y-%m-%d}, {a.agent or 'unknown'}): {a.text}\n"
            f"  B ({b.valid_from:%Y-%m-%d}, {b.agent or 'unknown'}): {b.text}"
        )
    try:
        answer, _tokens = chat_json(system=SYSTEM, user="\n\n".join(lines), schema_name="pair_verdicts", schema=SCHEMA)
    except LLMPaused:
        return {}  # the circuit breaker said so once, when it opened
    except LLMError:
        logger.warning("LLM tier unavailable; keeping the offline verdicts for %d pairs", len(pairs))
        return {}
    return parse_verdicts(answer, len(pairs))


def parse_verdicts(answer: Any, pair_count: int) -> dict[int, Verdict]:
    """Keep only well-formed items about pairs that exist; log the rest."""
    items = answer.get("verdicts") if isinstance(answer, dict) else None
    if not isinstance(items, list):
        logger.warning("LLM answer has no verdict list: %.200r", answer)
        return {}
    parsed: dict[int, Verdict] = {}
    for item in items:
        try:
            index = int(item["pair"])
            relation = Relation(item["relation"])
            confidence = min(1.0, max(0.0, float(item["confidence"])))
            current = {"A": "a", "B": "b"}.get(item.get("current") or "")
            reasoning = str(item.get("reasoning", ""))[:2000]
        except (KeyError, TypeError, ValueError):
            logger.warning("dropping malformed LLM verdict: %.200r", item)
            continue
        if not 0 <= index < pair_count:
            logger.warning("dropping LLM verdict for a pair that was not asked about: %r", index)
            continue
        if relation == Relation.TEMPORAL_CHANGE and current is None:
            current = "b"
        parsed[index] = Verdict(
            relation=relation,
            probability=confidence,
            tier="llm",
            current=current,  # type: ignore[arg-type]
            reasoning=reasoning,
        )
    return parsed
