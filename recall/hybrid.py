"""Recall: find the facts that answer a query, preferring what is currently true.

Two candidate pools — nearest neighbours on the HNSW index and a full-text
match — are merged, scored, de-duplicated and expanded along links:

    score = (α·cosine + β·lexical + γ·recency·relevant + δ·importance + ε·confidence)
            × max(floor, reliability factor)

``recency = exp(−λ·age_days)`` with the same λ as the decay job, weighted by
``relevant = min(1, max(cosine, lexical) / 0.5)``: it orders the facts that
answer the query and lifts no unrelated fact for being new. Age is
counted from ``valid_from`` (when the fact became true) back from the newest
candidate in the pool, not from the wall clock: recency only has to order the
candidates, and two facts a year apart that are both a decade old would
otherwise both score zero. So the newer of two near-identical facts wins.

The reliability factor (reliable 1.0, uncertain 0.6, contradicted 0.4,
superseded 0.2) has a floor of 0.3 so an important disputed fact still
surfaces — carrying its flag and the other side of the dispute.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import snowballstemmer
from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection, transaction
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Now
from pgvector.django import CosineDistance

from conflicts.models import Uncertainty, UncertaintyState, UncertaintyType
from memories.embeddings import DIMENSIONS, embed_text
from memories.models import LIVE_STATUSES, Link, Memory, Reliability
from memories.selectors import memories_load_vectors
from memoryhub.errors import InvalidInput
from recall.subjects import subject_first
from workspaces.models import Workspace

RELIABILITY_FACTOR = {
    Reliability.RELIABLE: 1.0,
    Reliability.UNCERTAIN: 0.6,
    Reliability.CONTRADICTED: 0.4,
    Reliability.SUPERSEDED: 0.2,
}
RELIABILITY_FLOOR = 0.3
# Two results at least this similar say the same thing: keep the most confident.
DUPLICATE_COSINE = 0.8
SAME_CONFIDENCE = 0.05
SAME_SCORE = 0.05
# Recency orders facts that answer the query: it counts in full from this relevance
# (the better of cosine and lexical) and proportionally below it, so the newest fact
# about something else does not outrank an older answer on freshness alone.
RELEVANT = 0.5
# Two hits this similar answer the same question (an answer and its update).
SAME_QUESTION_COSINE = 0.7
# One agent's reports in one scope are a running log ("backups", sre-copilot: the restore
# drill took 41 minutes … the latest drill took 26): less similar reports answer the same question.
SAME_STREAM_QUESTION_COSINE = 0.6
# How many top hits are compared with each other (newer first, near-duplicates).
COMPARED_HITS = 30
MIN_EF_SEARCH = 150
# The graph grows, the beam must too: from this many indexed rows ef_search rises with the
# square root of the row count, up to MAX_EF_SEARCH (1M rows: recall@10 0.88 at 150, 0.97 at 500).
EF_SEARCH_ROWS = 100_000
MAX_EF_SEARCH = 500
TOKEN = re.compile(r"\w+", re.UNICODE)
# Words joined by - . / : — with a digit among them, an identifier (INC-2291, v2.14.3, 10.0.3.7).
IDENTIFIER = re.compile(r"\w+(?:[-./:]\w+)+", re.UNICODE)
# Postgres' english stop words (tsearch_data/english.stop, from Snowball), dropped before BM25 as the
# english configuration drops them: in a pool of 40 facts "is" can be as rare as an IP address.
STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
    her hers herself it its itself they them their theirs themselves what which who whom this that
    these those am is are was were be been being have has had having do does did doing a an the and
    but if or because as until while of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then once here
    there when where why how all any both each few more most other some such no nor not only own
    same so than too very s t can will just don should now
    """.split()  # noqa: SIM905 - a word list reads better as text
)
# Query words in more than this share of all facts do not fetch lexical candidates
# (and in more than this many facts: on a small table every match is cheap).
COMMON_LEXEME_SHARE = 0.0025
COMMON_LEXEME_MIN_FACTS = 300
STATISTICS_TTL = 600.0  # seconds; ANALYZE and autovacuum refresh the statistics behind them

Mode = Literal["semantic", "hybrid"]
LexicalBackend = Literal["local_bm25", "postgres"]


@dataclass(frozen=True)
class Weights:
    cosine: float = 0.50
    lexical: float = 0.20
    recency: float = 0.15
    importance: float = 0.05
    confidence: float = 0.10

    def __post_init__(self) -> None:
        values = [getattr(self, f.name) for f in fields(self)]
        if any(v < 0 for v in values):
            raise InvalidInput("weights must not be negative", field="weights")
        if sum(values) == 0:
            raise InvalidInput("at least one weight must be above zero", field="weights")

    @classmethod
    def for_workspace(cls, workspace: Workspace, overrides: dict[str, float] | None = None) -> Weights:
        """Defaults, then the workspace's ``config["recall_weights"]``, then the call's."""
        merged: dict[str, float] = {}
        merged.update(workspace.config.get("recall_weights", {}))
        merged.update({k: v for k, v in (overrides or {}).items() if v is not None})
        known = {f.name for f in fields(cls)}
        return replace(cls(), **{k: float(v) for k, v in merged.items() if k in known})


@dataclass(frozen=True)
class Expand:
    rels: tuple[str, ...] = ("refines", "example_of")
    depth: int = 1
    cap: int = 5
    score: float = 0.7


@dataclass
class RecallQuery:
    query: str
    k: int = 10
    mode: Mode = "hybrid"
    weights: dict[str, float] = field(default_factory=dict)
    kinds: list[str] = field(default_factory=list)
    scope: str | None = None
    tags_any: list[str] = field(default_factory=list)
    tags_all: list[str] = field(default_factory=list)
    agent: str | None = None
    min_confidence: float = 0.3
    include_superseded: bool = False
    as_of: dt.datetime | None = None
    expand: Expand | None = None
    diversity: bool = True
    lexical_backend: LexicalBackend = "local_bm25"
    touch: bool = True


@dataclass
class ScoreParts:
    cosine: float = 0.0
    lexical: float = 0.0
    recency: float = 0.0
    importance: float = 0.0
    confidence: float = 0.0
    reliability_factor: float = 1.0


@dataclass
class Hit:
    memory: Memory
    score: float
    parts: ScoreParts
    reliability: str
    open_uncertainties: list[uuid.UUID] = field(default_factory=list)
    contradicted_by: list[Memory] = field(default_factory=list)
    expanded: bool = False
    via: uuid.UUID | None = None
    replaces: uuid.UUID | None = None

    @property
    def disputed(self) -> bool:
        return bool(self.open_uncertainties) or self.reliability in (Reliability.CONTRADICTED, Reliability.UNCERTAIN)


def recall(*, workspace: Workspace, query: RecallQuery, query_vector: np.ndarray[Any, Any] | None = None) -> list[Hit]:
    """Rank the workspace's facts for ``query``; see the module docstring."""
    weights = Weights.for_workspace(workspace, query.weights)
    if query.mode == "semantic":
        weights = Weights(cosine=1.0, lexical=0.0, recency=0.0, importance=0.0, confidence=0.0)
    if query_vector is None:
        query_vector = embed_text(query.query)
    pool_size = max(40, query.k * 4)

    base = _filtered(workspace, query)
    with transaction.atomic():
        _tune_vector_search(pool_size)
        candidates = _vector_candidates(base, query_vector, pool_size)
        if weights.lexical > 0:
            for memory in _lexical_candidates(base, query.query, pool_size, query_vector):
                candidates.setdefault(memory.pk, memory)
    matched = candidates
    replaced: dict[uuid.UUID, uuid.UUID] = {}
    if not query.include_superseded and query.as_of is None:
        candidates, replaced = _replace_by_chain_heads(candidates, query)
    if not candidates:
        return []

    pool = list(candidates.values())
    stand_ins = {head: matched[origin] for head, origin in replaced.items()}
    lexical = _lexical_scores(query, pool + list(stand_ins.values()))
    newest = max(m.valid_from for m in pool)
    hits = [_score(m, query_vector, lexical, weights, newest, query, origin=stand_ins.get(m.pk)) for m in pool]
    for hit in hits:
        hit.replaces = replaced.get(hit.memory.pk)
    # Ties: more important first, then newer.
    hits.sort(key=lambda h: (-h.score, -h.memory.importance, -h.memory.recorded_at.timestamp()))
    # Hits are compared with each other only near the top: that is where results come from.
    compared = max(COMPARED_HITS, 3 * query.k)
    memories_load_vectors([h.memory for h in hits[:compared]])
    hits = _newer_first(hits[:compared]) + hits[compared:]
    results = _diverse(hits, query.k) if query.diversity else hits[: query.k]
    if query.as_of is None:
        results = subject_first(base=base, query=query.query, results=results, make_hit=_subject_hit)
    if query.expand:
        results += _expansions(results, query.expand)
    _annotate_disputes(results)
    if query.touch:
        _touch([h.memory.pk for h in results])
    return results


def _subject_hit(memory: Memory, score: float) -> Hit:
    """A current fact the subject-first step lifts that ranking left out (recall/subjects.py)."""
    return Hit(memory, score, ScoreParts(), memory.reliability)


def _filtered(workspace: Workspace, query: RecallQuery) -> QuerySet[Memory]:
    qs = Memory.objects.filter(workspace=workspace).defer("search_vector")
    if query.as_of is None:
        qs = qs.filter(status__in=LIVE_STATUSES)
    else:
        # What the hub believed then (hub time) about what was true then (world time).
        at = query.as_of
        qs = qs.filter(recorded_at__lte=at, valid_from__lte=at)
        qs = qs.filter(Q(expired_at__isnull=True) | Q(expired_at__gt=at))
        qs = qs.filter(Q(valid_to__isnull=True) | Q(valid_to__gt=at))
        qs = qs.exclude(status="merged")
    if query.kinds:
        qs = qs.filter(kind__in=query.kinds)
    if query.scope is not None:
        qs = qs.filter(scope=query.scope)
    if query.agent is not None:
        qs = qs.filter(agent=query.agent)
    if query.tags_any:
        qs = qs.filter(tags__overlap=query.tags_any)
    if query.tags_all:
        qs = qs.filter(tags__contains=query.tags_all)
    if query.min_confidence > 0:
        qs = qs.filter(confidence__gte=query.min_confidence)
    return qs


def _tune_vector_search(pool_size: int) -> None:
    # Iterative scans keep filtered HNSW searches from coming back short (pgvector ≥ 0.8).
    # ef_search 150 rather than pgvector's 40: recall@10 0.95 → 0.96 for a 10k workspace
    # sharing the index with 100k others' rows, for < 1 ms; wider on larger tables
    # (ef_search_for; docs/BENCHMARKS.md).
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.ef_search = %s", [max(ef_search_for(_indexed_rows()), pool_size)])
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")


def ef_search_for(rows: int) -> int:
    """HNSW's search beam for an index of ``rows`` vectors: 150 up to 100k rows, then ∝ √rows, at most 500."""
    scaled = MIN_EF_SEARCH * math.sqrt(max(rows, 1) / EF_SEARCH_ROWS)
    return int(min(MAX_EF_SEARCH, max(MIN_EF_SEARCH, scaled)))


def _indexed_rows() -> int:
    """The planner's estimate of the rows in the memories table (cached; no count(*))."""

    def fetch() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE relname = 'memories_memory'")
            row = cursor.fetchone()
        return int(row[0]) if row else 0

    rows: int = _table_statistic("indexed_rows", fetch)
    return rows


def _vector_candidates(base: QuerySet[Memory], vector: np.ndarray[Any, Any], pool_size: int) -> dict[uuid.UUID, Memory]:
    qs = (
        base.filter(embedding__isnull=False)
        .annotate(distance=CosineDistance("embedding", vector))
        .defer("embedding")
        .order_by("distance")[:pool_size]
    )
    return {m.pk: m for m in qs}


def _lexical_candidates(
    base: QuerySet[Memory], text: str, pool_size: int, vector: np.ndarray[Any, Any]
) -> list[Memory]:
    lexemes = _rare_lexemes(text)
    if not lexemes:
        return []
    # OR of the query's rare words: a fact sharing one rare identifier is a candidate.
    # Common words ("team", "service") would match a large share of the workspace
    # and cost a rank computation each; they still count in the pool's scoring.
    tsquery = SearchQuery(" | ".join(_quoted(x) for x in lexemes), search_type="raw", config="simple")
    qs = (
        base.filter(search_vector=tsquery)
        .annotate(
            rank=SearchRank(F("search_vector"), tsquery, cover_density=True, normalization=32),
            distance=CosineDistance("embedding", vector),
        )
        .defer("embedding")
        # Equal ranks are common (one shared rare word); the closer meaning breaks the tie,
        # not the rows' physical order, which every touched row changes.
        .order_by("-rank", "distance")[:pool_size]
    )
    return list(qs)


def _rare_lexemes(text: str) -> list[str]:
    """The query's lexemes (English stemming) minus those in more than ``COMMON_LEXEME_SHARE`` of facts."""
    if not _tokens(text):
        return []
    with connection.cursor() as cursor:
        cursor.execute("SELECT lexeme FROM unnest(to_tsvector('english', %s))", [text])
        lexemes = sorted(row[0] for row in cursor.fetchall())
    common = _common_lexemes()
    return [x for x in lexemes if x not in common]


# Figures read from the planner's statistics, by name: (when fetched, value).
_statistics: dict[str, tuple[float, Any]] = {}


def _table_statistic(name: str, fetch: Callable[[], Any]) -> Any:
    """``fetch()``'s value, fetched again once it is ``STATISTICS_TTL`` old."""
    cached = _statistics.get(name)
    if cached is not None and time.monotonic() - cached[0] < STATISTICS_TTL:
        return cached[1]
    value = fetch()
    _statistics[name] = (time.monotonic(), value)
    return value


def _common_lexemes() -> frozenset[str]:
    """Lexemes in more than ``COMMON_LEXEME_SHARE`` of all facts, from ANALYZE's statistics (cached)."""

    def fetch() -> frozenset[str]:
        with connection.cursor() as cursor:
            cursor.execute(
                """
                SELECT element
                FROM pg_stats
                JOIN pg_class ON pg_class.relname = pg_stats.tablename
                CROSS JOIN unnest(most_common_elems::text::text[], most_common_elem_freqs) AS s(element, share)
                WHERE tablename = 'memories_memory' AND attname = 'search_vector' AND element IS NOT NULL
                  AND share > %s AND share * pg_class.reltuples > %s
                """,
                [COMMON_LEXEME_SHARE, COMMON_LEXEME_MIN_FACTS],
            )
            return frozenset(row[0] for row in cursor.fetchall())

    common: frozenset[str] = _table_statistic("common_lexemes", fetch)
    return common


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("'", "''").replace("\\", "\\\\") + "'"


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in TOKEN.findall(text)]


def bm25_terms(text: str, *, query: bool = False) -> list[str]:
    """Words as BM25 compares them: lower-cased, English words stemmed ("restores" → "restor").

    The stemmer is Snowball's English one, as in Postgres' ``english``
    configuration that fetches the lexical candidates, so a fact that was
    fetched for "restore" also scores for it. Tokens with digits
    (``v2``, ``e4012``, ``14``) are left whole: identifiers match exactly.

    Stop words go, as in that configuration. Joined identifiers (``INC-2291``,
    ``v2.14.3``, ``10.0.3.7``) are one term in a query — "INC-2291 root cause"
    weighs the ticket once, not as "inc" and "2291" outvoting "cause" — and
    both the whole and its parts in a fact, so "PAY 1234" still finds "PAY-1234".
    """
    identifiers = [m.lower() for m in IDENTIFIER.findall(text) if _has_digit(m)]
    if query and identifiers:
        text = IDENTIFIER.sub(lambda m: " " if _has_digit(m.group(0)) else m.group(0), text)
    words = [_stem(t) if t.isalpha() else t for t in _tokens(text) if t not in STOP_WORDS]
    return [*identifiers, *words] if query else [*words, *identifiers]


def _has_digit(word: str) -> bool:
    return any(c.isdigit() for c in word)


_ENGLISH = snowballstemmer.stemmer("english")


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    stem: str = _ENGLISH.stemWord(word)
    return stem


def _replace_by_chain_heads(
    candidates: dict[uuid.UUID, Memory], query: RecallQuery
) -> tuple[dict[uuid.UUID, Memory], dict[uuid.UUID, uuid.UUID]]:
    """Swap each superseded hit for the live head of its supersede chain."""
    result = {pk: m for pk, m in candidates.items() if m.superseded_by_id is None}
    pending = {m.pk: m.superseded_by_id for m in candidates.values() if m.superseded_by_id is not None}
    replaced: dict[uuid.UUID, uuid.UUID] = {}
    seen: set[uuid.UUID] = set(candidates)
    for _ in range(50):  # chains are short; the bound guards against corrupt cycles
        if not pending:
            break
        successors = {m.pk: m for m in Memory.objects.filter(pk__in=set(pending.values())).defer("search_vector")}
        next_pending: dict[uuid.UUID, uuid.UUID] = {}
        for origin, successor_id in pending.items():
            successor = successors.get(successor_id) if successor_id else None
            if successor is None:
                continue
            if successor.superseded_by_id is not None and successor.pk not in seen:
                seen.add(successor.pk)
                next_pending[origin] = successor.superseded_by_id
                continue
            if _passes(successor, query):
                result.setdefault(successor.pk, successor)
                replaced.setdefault(successor.pk, origin)
        pending = next_pending
    return result, replaced


def _passes(memory: Memory, query: RecallQuery) -> bool:
    return (
        memory.status in LIVE_STATUSES
        and memory.superseded_by_id is None
        and memory.confidence >= query.min_confidence
        and (not query.kinds or memory.kind in query.kinds)
        and (query.scope is None or memory.scope == query.scope)
        and (query.agent is None or memory.agent == query.agent)
        and (not query.tags_any or bool(set(query.tags_any) & set(memory.tags)))
        and (not query.tags_all or set(query.tags_all) <= set(memory.tags))
    )


def _lexical_scores(query: RecallQuery, pool: list[Memory]) -> dict[uuid.UUID, float]:
    if query.lexical_backend == "postgres":
        words = sorted(set(_tokens(query.query)))
        if not words:
            # "!!!", "(((" or ":*" hold no word to match; an empty raw tsquery is a syntax error.
            return {}
        ranks = dict(
            Memory.objects.filter(pk__in=[m.pk for m in pool])
            .annotate(
                rank=SearchRank(
                    F("search_vector"),
                    # Quoted, so no word is read as tsquery syntax (an operator, a weight, a prefix).
                    SearchQuery(" | ".join(_quoted(w) for w in words), search_type="raw"),
                    cover_density=True,
                    normalization=32,
                )
            )
            .values_list("pk", "rank")
        )
        top = max(ranks.values(), default=0.0) or 1.0
        return {pk: float(rank) / top for pk, rank in ranks.items()}
    return local_bm25(bm25_terms(query.query, query=True), {m.pk: bm25_terms(m.text) for m in pool})


def local_bm25(
    query_terms: list[str], documents: dict[uuid.UUID, list[str]], *, k1: float = 1.2, b: float = 0.75
) -> dict[uuid.UUID, float]:
    """BM25 with IDF computed over the candidate pool, normalised so the best is 1.0."""
    if not documents or not query_terms:
        return {}
    n = len(documents)
    avg_len = sum(len(d) for d in documents.values()) / n or 1.0
    document_frequency: Counter[str] = Counter()
    for terms in documents.values():
        document_frequency.update(set(terms))
    scores: dict[uuid.UUID, float] = {}
    for pk, terms in documents.items():
        counts = Counter(terms)
        score = 0.0
        for term in set(query_terms):
            tf = counts.get(term, 0)
            if not tf:
                continue
            df = document_frequency[term]
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(terms) / avg_len))
        scores[pk] = score
    top = max(scores.values())
    return {pk: (s / top if top > 0 else 0.0) for pk, s in scores.items()}


def reliability_factor(memory: Memory, as_of: dt.datetime | None = None) -> float:
    reliability = Reliability(memory.reliability)
    # Looking back, a fact superseded later was still the belief at the time.
    if (
        as_of is not None
        and reliability == Reliability.SUPERSEDED
        and (memory.superseded_at is None or memory.superseded_at > as_of)
    ):
        reliability = Reliability.RELIABLE
    return max(RELIABILITY_FLOOR, RELIABILITY_FACTOR[reliability])


def recency(memory: Memory, reference: dt.datetime) -> float:
    age_days = max(0.0, (reference - memory.valid_from).total_seconds() / 86400)
    return math.exp(-settings.MEMORYHUB_DECAY_LAMBDA * age_days)


def _query_cosine(memory: Memory, vector: np.ndarray[Any, Any]) -> float:
    """From the distance the candidate query computed; from the vector for facts loaded whole (chain heads)."""
    distance = getattr(memory, "distance", None)
    if distance is not None:
        return 1.0 - float(distance)
    if not _has_vector(memory):
        return 0.0
    return float(np.dot(vector, memory.embedding))


def _has_vector(memory: Memory) -> bool:
    """Whether the fact's vector is loaded and present (never loads a deferred one)."""
    return "embedding" not in memory.get_deferred_fields() and memory.embedding is not None


def _score(
    memory: Memory,
    vector: np.ndarray[Any, Any],
    lexical: dict[uuid.UUID, float],
    weights: Weights,
    reference: dt.datetime,
    q: RecallQuery,
    *,
    origin: Memory | None = None,
) -> Hit:
    """Score one candidate; a chain head standing in for ``origin`` is at least as relevant as it.

    The superseded fact matched the query and its successor is the current
    answer to the same question, though often in other words ("moved from
    Bristol to Bath" for "lives in Bristol"): relevance (cosine, lexical) is
    the better of the two, everything else is the head's own.
    """
    cosine = _query_cosine(memory, vector)
    lexical_score = lexical.get(memory.pk, 0.0)
    if origin is not None:
        cosine = max(cosine, _query_cosine(origin, vector))
        lexical_score = max(lexical_score, lexical.get(origin.pk, 0.0))
    parts = ScoreParts(
        cosine=cosine,
        lexical=lexical_score,
        recency=recency(memory, reference),
        importance=memory.importance,
        confidence=memory.confidence,
        reliability_factor=reliability_factor(memory, q.as_of),
    )
    linear = (
        weights.cosine * parts.cosine
        + weights.lexical * parts.lexical
        + weights.recency * parts.recency * min(1.0, max(parts.cosine, parts.lexical) / RELEVANT)
        + weights.importance * parts.importance
        + weights.confidence * parts.confidence
    )
    return Hit(memory=memory, score=linear * parts.reliability_factor, parts=parts, reliability=memory.reliability)


def _diverse(hits: list[Hit], k: int) -> list[Hit]:
    """Collapse near-duplicates (cosine ≥ 0.8) to one member, keeping k results.

    The member kept is the most confident one; between equally confident
    statements (within ``SAME_CONFIDENCE``) that rank alike (within
    ``SAME_SCORE``), the newer: two near-identical statements made at
    different times are an answer and its update. A clearly better match (a
    ticket key's own fact over its templated siblings) is never swapped out.

    Only the top hits are compared (their vectors are loaded); the walk goes
    deeper, a batch of vectors at a time, only when they cannot fill ``k``.
    """
    limit = min(len(hits), max(COMPARED_HITS, 3 * k))
    while True:
        memories_load_vectors([h.memory for h in hits[:limit]])
        chosen = _collapse(hits[:limit], k)
        if len(chosen) >= k or limit == len(hits):
            return chosen
        limit = min(len(hits), limit + COMPARED_HITS)


def _collapse(hits: list[Hit], k: int) -> list[Hit]:
    similar = _near_duplicates(hits)
    chosen: list[int] = []  # indexes into hits
    dropped: list[int] = []
    for i, hit in enumerate(hits):
        slot = next((n for n, j in enumerate(chosen) if similar[i, j]), None)
        if slot is None:
            # An older copy of a statement dropped above is outdated, not a fresh result.
            if len(chosen) < k and not any(similar[i, j] and _updates(hits[j], hit) for j in dropped):
                chosen.append(i)
            continue
        if _preferred(hit, hits[chosen[slot]]):
            dropped.append(chosen[slot])
            chosen[slot] = i
        else:
            dropped.append(i)
    return [hits[i] for i in chosen]


def _newer_first(hits: list[Hit]) -> list[Hit]:
    """Two statements that answer the same question about equally well: the newer one goes first.

    "Who runs the platform team?" — "Ana runs it" (March) and "Bo runs it"
    (June) are similar (cosine ≥ ``SAME_QUESTION_COSINE``, or
    ``SAME_STREAM_QUESTION_COSINE`` when one agent wrote both in one scope),
    equally confident and score within ``SAME_SCORE``: recency alone barely
    separates facts that are both old, so the later statement is moved just
    above the earlier one. A clearly better match keeps its place.
    """
    if len(hits) < 2:
        return hits
    cosine = _cosines(hits)
    ordered = list(range(len(hits)))
    for j in range(1, len(hits)):
        position = ordered.index(j)
        for slot in range(position):
            i = ordered[slot]
            if _same_question(hits[i], hits[j], cosine[i, j]) and _updates(hits[j], hits[i]):
                ordered.insert(slot, ordered.pop(position))
                break
    return [hits[i] for i in ordered]


def _same_question(a: Hit, b: Hit, cosine: float) -> bool:
    """Very similar statements, or similar ones from one agent's reports in one scope."""
    if cosine >= SAME_QUESTION_COSINE:
        return True
    x, y = a.memory, b.memory
    same_stream = bool(x.scope and x.agent) and (x.scope, x.agent) == (y.scope, y.agent)
    return same_stream and cosine >= SAME_STREAM_QUESTION_COSINE


def _updates(newer: Hit, older: Hit) -> bool:
    return (
        newer.memory.valid_from > older.memory.valid_from
        and abs(newer.memory.confidence - older.memory.confidence) <= SAME_CONFIDENCE
        and older.score - newer.score <= SAME_SCORE
    )


def _near_duplicates(hits: list[Hit]) -> np.ndarray[Any, Any]:
    """Which pairs of hits are near-duplicates."""
    similar: np.ndarray[Any, Any] = _cosines(hits) >= DUPLICATE_COSINE
    return similar


def _cosines(hits: list[Hit]) -> np.ndarray[Any, Any]:
    """Cosine between every two hits (one matrix product; a hit without an embedding matches nothing)."""
    vectors = np.zeros((len(hits), DIMENSIONS), dtype=np.float32)
    for i, hit in enumerate(hits):
        if _has_vector(hit.memory):
            vectors[i] = hit.memory.embedding
    cosines: np.ndarray[Any, Any] = vectors @ vectors.T
    return cosines


def _preferred(candidate: Hit, kept: Hit) -> bool:
    new, old = candidate.memory, kept.memory
    if abs(new.confidence - old.confidence) > SAME_CONFIDENCE:
        return new.confidence > old.confidence
    return kept.score - candidate.score <= SAME_SCORE and new.valid_from > old.valid_from


def _expansions(results: list[Hit], spec: Expand) -> list[Hit]:
    """Follow ``spec.rels`` outward from the results and append unseen live neighbours."""
    seen = {h.memory.pk for h in results}
    frontier = list(seen)
    added: list[Hit] = []
    for _ in range(spec.depth):
        if not frontier or len(added) >= spec.cap:
            break
        links = Link.objects.filter(src_id__in=frontier, rel__in=spec.rels).order_by("created_at", "id")
        targets = {
            m.pk: m
            for m in Memory.objects.filter(pk__in=[link.dst_id for link in links], status__in=LIVE_STATUSES).defer(
                "search_vector"
            )
        }
        frontier = []
        for link in links:
            target = targets.get(link.dst_id)
            if target is None or target.pk in seen or len(added) >= spec.cap:
                continue
            seen.add(target.pk)
            frontier.append(target.pk)
            added.append(
                Hit(
                    memory=target,
                    score=spec.score,
                    parts=ScoreParts(reliability_factor=reliability_factor(target)),
                    reliability=target.reliability,
                    expanded=True,
                    via=link.src_id,
                )
            )
    return added


def _annotate_disputes(hits: list[Hit]) -> None:
    """Attach open uncertainties and, for contradictions, the memories on the other side."""
    by_id = {h.memory.pk: h for h in hits}
    if not by_id:
        return
    open_states = [UncertaintyState.OPEN, UncertaintyState.SURFACED]
    records = Uncertainty.objects.filter(
        Q(memory_a_id__in=by_id) | Q(memory_b_id__in=by_id), state__in=open_states
    ).select_related("memory_a", "memory_b")
    for record in records:
        for side, other in ((record.memory_a, record.memory_b), (record.memory_b, record.memory_a)):
            if side is None or side.pk not in by_id:
                continue
            hit = by_id[side.pk]
            hit.open_uncertainties.append(record.pk)
            if record.uncertainty_type == UncertaintyType.CONTRADICTION and other is not None:
                hit.contradicted_by.append(other)
    contradicted = [h for h in hits if h.reliability == Reliability.CONTRADICTED]
    if contradicted:
        ids = [h.memory.pk for h in contradicted]
        for link in (
            Link.objects.filter(rel="contradicts")
            .filter(Q(src_id__in=ids) | Q(dst_id__in=ids))
            .select_related("src", "dst")
        ):
            for side, other in ((link.src, link.dst), (link.dst, link.src)):
                flagged = by_id.get(side.pk)
                if flagged is not None and all(m.pk != other.pk for m in flagged.contradicted_by):
                    flagged.contradicted_by.append(other)


def _touch(ids: list[uuid.UUID]) -> None:
    """Count the access. Access counters never feed the score, so a repeated query keeps its order.

    Bookkeeping, not a fact: the commit does not wait for the WAL flush
    (``synchronous_commit = off`` for this transaction only), so a crash can
    lose the last few counts but recall never waits on the disk. The columns
    are in no index and the table leaves room on its pages, so the update is
    heap-only (no index writes).
    """
    if not ids:
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")
        Memory.objects.filter(pk__in=ids).update(access_count=F("access_count") + 1, last_accessed_at=Now())
