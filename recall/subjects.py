"""Subject-first recall: a question about a subject answers with its current fact first.

"Where does the user live?", "Home city", "Acme Corp seats", "Who is Priya's
manager?" name an attribute (and often an entity). Every fact carries its
subject (``memories/subjects.py``), so the hub can answer the way a person
would: the current fact of each entity the query names, with the attribute it
asks about, comes first — the newest live claim about it, whatever its words —
with the fact it replaced named behind it (``Hit.replaces``). The ranked
results follow.

A separate step after ranking (``recall/hybrid.py`` calls it once), so the
score itself stays what it is. A query that names no attribute the lexicon
knows changes nothing.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Protocol, TypeVar

from django.db.models import QuerySet

from memories.models import Memory
from memories.speech_acts import LABELS, is_claim
from memories.subjects import attribute_in, canonical_attribute

# At most this many subjects are lifted to the top of one answer.
MAX_SUBJECTS = 3
# The attribute's newest facts read to find the entities (memory_ws_attribute_recent walks them in order).
NEWEST_FACTS = 100
NOT_CLAIMS = [label for label in LABELS if not is_claim(label)]

# Question shapes that name an attribute without its noun.
_QUESTION_ATTRIBUTES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bwhere\b.*\b(?:live|living|based|stay|reside)s?\b", re.IGNORECASE), "home city"),
    (re.compile(r"\bwho\b.*\b(?:report|reports) to\b|\bwho manages\b", re.IGNORECASE), "manager"),
    (re.compile(r"\bwhere\b.*\bwork(?:s|ing)?\b|\bwho\b.*\bwork(?:s|ing)? for\b", re.IGNORECASE), "employer"),
    (re.compile(r"\bhow much\b.*\b(?:cost|pay|charge)", re.IGNORECASE), "price"),
    (re.compile(r"\bhow many seats\b", re.IGNORECASE), "seat count"),
    (re.compile(r"\bwhich region\b|\bwhat region\b", re.IGNORECASE), "region"),
)


class HitLike(Protocol):
    memory: Memory
    score: float
    replaces: uuid.UUID | None


H = TypeVar("H", bound=HitLike)


def query_attribute(text: str) -> str:
    """The attribute a query asks about, or "" when it names none the hub knows."""
    for pattern, attribute in _QUESTION_ATTRIBUTES:
        if pattern.search(text):
            return attribute
    return attribute_in(text)


def _query_words(query: str) -> set[str]:
    """The query's words, lower-cased, each possessive also without its "'s" ("Theo's" names "theo")."""
    words = {w.lower().replace("’", "'") for w in re.findall(r"[\w'’]+", query)}
    return words | {w.removesuffix("'s") for w in words}


def _named_in(entity: str, query_words: set[str]) -> bool:
    words = [w.removesuffix("'s") for w in entity.split()]
    if entity == "user":
        return bool(query_words & {"user", "user's", "users"})
    if entity == "speaker":
        return bool(query_words & {"i", "my", "me"})
    return bool(words) and all(w in query_words for w in words)


def subject_first(
    *, base: QuerySet[Memory], query: str, results: list[H], make_hit: Callable[[Memory, float], H]
) -> list[H]:
    """``results`` with the current fact of each subject the query asks about moved to the front.

    ``base``: the recall's filtered facts (workspace, scope, kinds, …), so the
    step never returns a fact the query's filters exclude. Only entities the
    query names are lifted ("Priya's manager" names "priya"; "the user" and "I"
    name theirs), among the attribute's newest facts and the ranked results.
    A query that names none is ranked as before: guessing the entity lifted
    the wrong one's fact over the best match ("Theo's birthday" answered with
    the user's), and on the stories the guess cost more than it found
    (docs/DETECTION.md, 2026-11-29 fifth session).
    """
    attribute = query_attribute(query)
    if not attribute:
        return results
    attribute = canonical_attribute(attribute)
    # Without their vectors: parsing 384 floats a row cost more than the lookup (10 ms for 100 rows).
    base = base.defer("embedding")
    # Only the id and entity of the newest 100: making 100 model instances cost ~3 ms, and at most
    # MAX_SUBJECTS of them are lifted (read whole below, when ranking has not already read them).
    facts: list[tuple[uuid.UUID, str]] = list(
        base.filter(subject_attribute=attribute, superseded_by__isnull=True)
        .exclude(speech_act__in=NOT_CLAIMS)
        .order_by("-valid_from", "-recorded_at")
        .values_list("pk", "subject_entity")[:NEWEST_FACTS]
    )
    if not facts:
        return results
    query_words = _query_words(query)
    newest_id: dict[str, uuid.UUID] = {}
    for pk, entity in facts:
        newest_id.setdefault(entity, pk)
    entities = list(newest_id)
    ranked = [h.memory.subject_entity for h in results if h.memory.subject_attribute == attribute]
    named = [e for e in dict.fromkeys([*entities, *ranked]) if e and _named_in(e, query_words)]
    chosen = named[:MAX_SUBJECTS]
    shown = {h.memory.pk: h.memory for h in results}
    unread = [newest_id[e] for e in chosen if e in newest_id and newest_id[e] not in shown]
    if unread:
        shown.update((m.pk, m) for m in base.filter(pk__in=unread))
    newest = {e: shown[newest_id[e]] for e in chosen if newest_id.get(e) in shown}
    missing = [e for e in chosen if e not in newest]
    if missing:
        # A ranked result's entity whose facts are older than the attribute's newest 100: one query for them.
        rows = (
            base.filter(subject_attribute=attribute, subject_entity__in=missing, superseded_by__isnull=True)
            .exclude(speech_act__in=NOT_CLAIMS)
            .order_by("subject_entity", "-valid_from", "-recorded_at")
            .distinct("subject_entity")
        )
        newest.update({fact.subject_entity: fact for fact in rows})
    current = [newest[e] for e in chosen if e in newest]
    if not current:
        return results
    by_id = {h.memory.pk: h for h in results}
    top = results[0].score if results else 1.0
    lifted = [by_id.get(memory.pk) or make_hit(memory, top) for memory in current]
    asking = [h.memory.pk for h in lifted if h.replaces is None]
    if asking:
        # What each one replaced, newest first: one query for all of them.
        replaced: dict[uuid.UUID, uuid.UUID] = {}
        rows = Memory.objects.filter(superseded_by__in=asking).order_by("-valid_from")
        for pk, successor in rows.values_list("pk", "superseded_by_id"):
            replaced.setdefault(successor, pk)
        for hit in lifted:
            if hit.replaces is None:
                hit.replaces = replaced.get(hit.memory.pk)
    lifted_ids = {h.memory.pk for h in lifted}
    rest = [h for h in results if h.memory.pk not in lifted_ids]
    return (lifted + rest)[: max(len(results), len(lifted))]
