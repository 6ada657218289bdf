"""Which existing facts a new or changed fact should be compared with.

Bounded fan-out, never a scan of the workspace: the nearest neighbours on the
HNSW index, facts with the same ``key`` (a trait slot such as ``home_city``),
facts with the same subject — entity and attribute (``memories/subjects.py``),
however far apart their embeddings — and, from a wider neighbour pool at a
lower similarity, facts sharing the new fact's scope or a tag or naming the same
thing (:func:`one_thing`: "CI", never the user or a chat speaker). Only claims are
compared: a question, greeting, opinion or plan has no candidates and is
nobody's candidate (``memories/speech_acts.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import connection, transaction
from django.db.models import Q
from pgvector.django import CosineDistance

from memories.models import LIVE_STATUSES, Memory
from memories.selectors import memories_load_vectors
from memories.speech_acts import LABELS, is_claim
from memories.subjects import entities_agree, names_a_person, speakers_differ, without_speaker

NOT_CLAIMS = [label for label in LABELS if not is_claim(label)]
# Kept ahead of neighbours when the candidates are cut to MAX_CANDIDATES.
ALWAYS_COMPARED = ("same_key", "same_subject")

NEIGHBOURS = 10
NEIGHBOUR_MIN_COSINE = 0.45
WIDE_POOL = 30
SCOPE_OR_TAG_MIN_COSINE = 0.3
SAME_KEY_LIMIT = 5
SAME_SUBJECT_LIMIT = 5
MAX_CANDIDATES = 12


@dataclass
class Candidate:
    memory: Memory
    similarity: float
    why: str  # "neighbour" | "same_key" | "same_subject" | "scope_or_tag" | "same_entity"


def candidates_for(memory: Memory) -> list[Candidate]:
    """At most ``MAX_CANDIDATES`` live, unsuperseded facts of the same workspace, most similar first."""
    if not is_claim(memory.speech_act):
        return []
    base = (
        Memory.objects.filter(workspace_id=memory.workspace_id, status__in=LIVE_STATUSES, superseded_by__isnull=True)
        .exclude(pk=memory.pk)
        .exclude(speech_act__in=NOT_CLAIMS)
        .defer("search_vector")
    )
    found: dict[object, Candidate] = {}
    if memory.embedding is not None:
        vector = np.asarray(memory.embedding, dtype=np.float32)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL hnsw.ef_search = 64")
                cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            # The cosine comes back with each row, the vector does not: only the few
            # candidates kept need theirs (parsing 30 vectors cost more than the index walk).
            pool = list(
                base.filter(embedding__isnull=False)
                .annotate(distance=CosineDistance("embedding", vector))
                .defer("embedding")
                .order_by("distance")[:WIDE_POOL]
            )
        for rank, near in enumerate(pool):
            similarity = 1.0 - float(near.distance)
            if rank < NEIGHBOURS and similarity >= NEIGHBOUR_MIN_COSINE:
                found[near.pk] = Candidate(near, similarity, "neighbour")
            elif similarity >= SCOPE_OR_TAG_MIN_COSINE and _shares_scope_or_tag(memory, near):
                found[near.pk] = Candidate(near, similarity, "scope_or_tag")
            elif similarity >= SCOPE_OR_TAG_MIN_COSINE and one_thing(memory, near):
                # "Our CI runs on Jenkins." / "CI is on GitHub Actions since the migration.": cosine 0.44.
                found[near.pk] = Candidate(near, similarity, "same_entity")
    if memory.key:
        same_key = base.filter(key=memory.key).filter(Q(kind=memory.kind)).order_by("-valid_from")[:SAME_KEY_LIMIT]
        for other in same_key:
            if other.pk not in found:
                found[other.pk] = Candidate(other, memory_cosine(memory, other), "same_key")
    if memory.subject_entity and memory.subject_attribute:
        same_subject = base.filter(
            subject_entity=memory.subject_entity, subject_attribute=memory.subject_attribute
        ).order_by("-valid_from")[:SAME_SUBJECT_LIMIT]
        for other in same_subject:
            if other.pk not in found:
                found[other.pk] = Candidate(other, memory_cosine(memory, other), "same_subject")
    # Two speakers' first-person lines ("I work at a bank" / "I work at a farm") are two people's.
    for pk, candidate in list(found.items()):
        other = candidate.memory
        if speakers_differ(
            memory.text, memory.agent, memory.subject_entity, other.text, other.agent, other.subject_entity
        ):
            del found[pk]
    ranked = sorted(found.values(), key=lambda c: (c.why not in ALWAYS_COMPARED, -c.similarity))[:MAX_CANDIDATES]
    memories_load_vectors([c.memory for c in ranked])
    return ranked


def _shares_scope_or_tag(a: Memory, b: Memory) -> bool:
    return bool(a.scope and a.scope == b.scope) or bool(set(a.tags) & set(b.tags))


def one_thing(a: Memory, b: Memory) -> bool:
    """Both name one thing ("CI", "the checkout service"), not a person nor a chat line's speaker.

    Most of what is said of the user, or by a speaker in a chat, names them: sharing them says nothing.
    """
    return (
        entities_agree(a.subject_entity, b.subject_entity) is True
        and not names_a_person(a.subject_entity)
        and not names_a_person(b.subject_entity)
        and without_speaker(a.text) == a.text
        and without_speaker(b.text) == b.text
    )


def memory_cosine(a: Memory, b: Memory) -> float:
    """Cosine of two memories' embeddings; 0 when either has none."""
    if a.embedding is None or b.embedding is None:
        return 0.0
    return float(np.dot(np.asarray(a.embedding), np.asarray(b.embedding)))
