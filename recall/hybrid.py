"""Recall: find the facts that answer a query, preferring what is currently true.

Two candidate pools — nearest neighbours on the HNSW index and a full-text
match — are merged, scored, de-duplicated and expanded along links:

    score = (α·cosine + β·lexical + δ·importance + ε·confidence) × max(floor, reliability factor)
            + γ·recency within the subject × the same factor

``lexical`` is BM25 with each word's document frequency over the whole
workspace, as a share of what a fact holding every query word would score: a
fact holding the query's rare words scores near 1, one sharing only a word
most facts hold scores near 0, whatever else the pool holds.

Recency orders statements about one subject (the same ``key``, or
near-duplicates): the statement in effect — the newest, or for a query that
names a past month the last one made by then — counts 1, its older siblings
``exp(−λ·days)`` with the decay job's λ; a fact alone in its subject counts 1, so
no fact is lifted over another subject's answer for being new.

The reliability factor (reliable 1.0, uncertain 0.6, contradicted 0.4,
superseded 0.2) has a floor of 0.3 so an important disputed fact still
surfaces — carrying its flag and the other side of the dispute. A dispute
mark's penalty scales with how sure the hub is of it: in full once a person
reviewed it or a rule settled it, at half the classifier's probability while it
is an unreviewed flag. The weights were fitted on the tuning conversations of
bench/retrieval.py (bench/retrieval_fit.py); docs/RECALL.md has the figures.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property, lru_cache
from typing import Any, Literal

import numpy as np
import snowballstemmer
from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection, transaction
from django.db.models import Count, Exists, ExpressionWrapper, F, FloatField, OuterRef, Q, QuerySet, Value
from pgvector.django import CosineDistance

from conflicts.detection import classifier
from conflicts.models import Answer, ResolutionStrategy, Uncertainty, UncertaintyState, UncertaintyType
from memories.embeddings import DIMENSIONS, embed_text
from memories.models import LIVE_STATUSES, Link, Memory, Reliability
from memories.selectors import memories_load_vectors, memories_with_vectors
from memories.speech_acts import is_claim
from memories.subjects import IDENTIFIER  # words joined by - . / :; with a digit, an identifier (INC-2291, v2.14.3)
from memoryhub.errors import InvalidInput
from recall import periods
from recall.periods import LATEST, Period, stated_date
from recall.subjects import subject_first
from workspaces.models import Workspace

RELIABILITY_FACTOR = {
    Reliability.RELIABLE: 1.0,
    Reliability.UNCERTAIN: 0.6,
    Reliability.CONTRADICTED: 0.4,
    Reliability.SUPERSEDED: 0.2,
}
RELIABILITY_FLOOR = 0.3
DISPUTED = (Reliability.UNCERTAIN, Reliability.CONTRADICTED)
# How sure the hub is of a dispute mark (uncertain, contradicted) scales its penalty: a person's review
# or a rule's decision is certain (1.0); a classifier's unreviewed flag counts at its probability times
# this. On the conversation benchmark detection flagged ordinary chat lines, and the full penalty cost
# dense search 5 points of hit@10 (issue 22).
UNREVIEWED_CERTAINTY = 0.5
# Two results at least this similar say the same thing: keep the most confident.
DUPLICATE_COSINE = 0.8
# A bare subject ("Feature flag service", "Home city", "Where the mother lives": a few words, no question)
# asks for that subject's current state: its statements count as one subject for recency from this
# similarity, not only as near-duplicates. On the stories' subject questions this put the newest statement
# first more often (dev current truth 0.42 → 0.44 own, 0.72 → 0.81 shared); on the conversation benchmark's
# questions the same grouping cost 8–10 points of hit@10, so a question keeps DUPLICATE_COSINE (docs/RECALL.md).
SUBJECT_LOOKUP_COSINE = 0.5
SUBJECT_LOOKUP_WORDS = 6
# A bare subject lookup's first hit is read against the next ones by the slot reader: a newer hit it reads
# as another value of the first one's subject ("Errors are reported to Sentry." → a month later "Crash
# reports now go to Bugsnag; the Sentry project is archived.", "update" + "contradiction" at least the
# ingestion's ONE_SLOT_CHANGE) answers the same question in other words. It is then as relevant as the
# first hit and recency orders the two, as for a supersede chain's head; nothing is retired. At most
# this many hits (one batch of two pairs); bench/recall.py measures with and without it (LOOKUP_PAIRS_READ).
LOOKUP_READ_HITS = 3
LOOKUP_PAIRS_READ = True
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
# Questions about time (issue 22; bench/retrieval.py --variants undoes each to measure it):
# "When did …?" reads superseded statements as history; "… last …?" / "latest" orders every compared
# hit by its date.
HISTORY_QUESTIONS = True
LATEST_QUESTIONS = True
STATISTICS_TTL = 600.0  # seconds; ANALYZE and autovacuum refresh the statistics behind them
# A workspace of at most this many live facts is searched exactly, not through the HNSW index: a filtered index
# scan walks the whole table's graph, and for a small workspace among many (or many dead) rows it can stop
# (hnsw.max_scan_tuples) before it meets the workspace's facts. At 2,000 facts reading them all measured as fast
# as the index (docs/BENCHMARKS.md, 2026-12-01).
EXACT_SEARCH_FACTS = 2_000

Mode = Literal["semantic", "hybrid"]
LexicalBackend = Literal["local_bm25", "postgres"]


@dataclass(frozen=True)
class Weights:
    """Fitted on bench/retrieval.py's tuning conversations by bench/retrieval_fit.py (2026-11-25).

    The grid's best hit@10 over both ingestion forms: 0.771, against 0.764 for the
    hand-set 0.50/0.20/0.15/0.05/0.10; the confidence weight tied from 0 to 0.10.
    """

    cosine: float = 0.50
    lexical: float = 0.30
    recency: float = 0.10
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
    # Seed 003: facts less important than this are not recalled (0: no filter).
    min_importance: float = 0.0
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
    # exp(−λ·days from the statement in effect about the same subject); 1 when alone in its subject.
    subject_recency: float = 1.0


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

    @cached_property
    def effective_from(self) -> dt.datetime:
        """When the statement took effect: the day or month its own words give ("moved in May 2023"), else valid_from.

        Read once per hit: the top hits are compared pairwise, and each comparison asks.
        """
        return _stated(self.memory.text, self.memory.valid_from) or self.memory.valid_from


def recall(*, workspace: Workspace, query: RecallQuery, query_vector: np.ndarray[Any, Any] | None = None) -> list[Hit]:
    """Rank the workspace's facts for ``query``; see the module docstring.

    One transaction for the whole recall: its settings (the HNSW beam, the
    access counts' commit without waiting for the WAL flush) are set once and
    end with it, and no BEGIN / COMMIT pair stands between its queries.
    """
    if query_vector is None:
        query_vector = embed_text(query.query)  # before the transaction opens: no connection held idle
    with transaction.atomic():
        return _recall(workspace, query, query_vector)


def _recall(workspace: Workspace, query: RecallQuery, query_vector: np.ndarray[Any, Any]) -> list[Hit]:
    base = _filtered(workspace, query)
    hits = ranked_pool(workspace=workspace, query=query, query_vector=query_vector, base=base)
    if not hits:
        return []
    period = query_period(query.query) if query.as_of is None else None
    # Hits are compared with each other only near the top: that is where results come from.
    compared = max(COMPARED_HITS, 3 * query.k)
    hits = _newer_first(hits[:compared], period) + hits[compared:]
    results = _diverse(hits, query.k, period) if query.diversity else hits[: query.k]
    if query.as_of is None and period is None:
        # A question about a subject gets each matching subject's current fact first (recall/subjects.py).
        results = subject_first(base=base, query=query.query, results=results, make_hit=_subject_hit)
    if query.expand:
        results += _expansions(results, query.expand)
    _annotate_disputes(results)
    if query.touch:
        _touch([h.memory.pk for h in results])
    return results


def ranked_pool(
    *,
    workspace: Workspace,
    query: RecallQuery,
    query_vector: np.ndarray[Any, Any] | None = None,
    base: QuerySet[Memory] | None = None,
) -> list[Hit]:
    """Every candidate, scored and sorted, before the top hits are compared with each other.

    ``base``: the query's filtered facts (``_filtered``), when the caller has them already.
    bench/retrieval_fit.py re-weights these scores' parts to learn the default weights.
    """
    weights = Weights.for_workspace(workspace, query.weights)
    if query.mode == "semantic":
        weights = Weights(cosine=1.0, lexical=0.0, recency=0.0, importance=0.0, confidence=0.0)
    if query_vector is None:
        query_vector = embed_text(query.query)
    pool_size = max(40, query.k * 4)
    # "Where did she live in May 2023?" asks about then: what was superseded since still answers it.
    period = query_period(query.query) if query.as_of is None else None

    # "When did Ana move to Porto?" asks about the past: a statement superseded since still tells when.
    past = query.as_of is None and HISTORY_QUESTIONS and periods.asks_when(query.query)
    # "When did Bo last change jobs?": the newest statement answers, and "last" is no word to match.
    latest, lexical_text = (False, query.query)
    if query.as_of is None and period is None and LATEST_QUESTIONS:
        latest, lexical_text = periods.asks_latest(query.query)
    lexical_query = replace(query, query=lexical_text) if latest else query

    if base is None:
        base = _filtered(workspace, query)
    # Within recall's transaction no savepoint is needed: its settings last to recall's end.
    with transaction.atomic(savepoint=False):
        _tune_vector_search(pool_size)
        # The nearest come with their vectors where the top hits are compared right after scoring
        # (recency within a subject). Without recency (semantic mode, or a recency weight of 0) their
        # vectors are read later, for the diversity step only: the newer-first step before it compares
        # no vectors there, as it never has (docs/RECALL.md, step 5).
        exact = _workspace_size(workspace) <= EXACT_SEARCH_FACTS
        candidates = _vector_candidates(base, query_vector, pool_size, with_vectors=weights.recency > 0, exact=exact)
        if weights.lexical > 0:
            for memory in _lexical_candidates(base, lexical_query.query, pool_size, query_vector):
                candidates.setdefault(memory.pk, memory)
    matched = candidates
    certainty = _mark_certainty(list(matched.values()))
    replaced: dict[uuid.UUID, uuid.UUID] = {}
    if not query.include_superseded and query.as_of is None and not past:
        candidates, replaced = _replace_by_chain_heads(candidates, query)
        # A classifier's unreviewed supersede is a guess: the old fact stays beside its head, penalised
        # by how sure the guess is; so does one in effect during the month a query asks about.
        kept = {
            pk: m
            for pk, m in matched.items()
            if m.superseded_by_id is not None
            and (certainty.get(pk, 1.0) < 1.0 or (period is not None and _in_effect_during(m, period)))
        }
        candidates = {**candidates, **kept}
    if not candidates:
        return []

    pool = list(candidates.values())
    stand_ins = {head: matched[origin] for head, origin in replaced.items()}
    lexical = (
        _lexical_scores(lexical_query, pool + list(stand_ins.values()), base, workspace) if weights.lexical > 0 else {}
    )
    newest = max(m.valid_from for m in pool)
    heads = [m for m in pool if m.pk not in matched]
    if any(m.reliability in DISPUTED for m in heads):
        certainty.update(_mark_certainty(heads))
    # Looking back at a period that has ended: a supersede after its end was not yet the belief then.
    as_of = query.as_of or (period.end if period and period.end < LATEST else None)
    hits = [
        _score(m, query_vector, lexical, weights, newest, as_of, certainty, origin=stand_ins.get(m.pk), past=past)
        for m in pool
    ]
    for hit in hits:
        hit.replaces = replaced.get(hit.memory.pk)
    hits.sort(key=_order)
    if weights.recency > 0:
        # Recency orders statements about one subject; it is no pull across subjects.
        compared = max(COMPARED_HITS, 3 * query.k)
        top = hits[:compared]
        memories_load_vectors([h.memory for h in top])
        lookup = is_subject_lookup(query.query)
        grouping = SUBJECT_LOOKUP_COSINE if lookup else DUPLICATE_COSINE
        read = set()
        if lookup and LOOKUP_PAIRS_READ and period is None and not latest:
            read = _another_value_read(top[:LOOKUP_READ_HITS], query.query)
            for older, newer in read:
                _answers_as_well(top[newer], top[older], weights)
        _add_subject_recency(top, weights.recency, period, latest=latest, subject_cosine=grouping, linked=read)
        hits = sorted(top, key=_order) + hits[compared:]
    return hits


def _order(hit: Hit) -> tuple[float, float, float]:
    # Ties: more important first, then newer.
    return (-hit.score, -hit.memory.importance, -hit.memory.recorded_at.timestamp())


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
    if query.min_importance > 0:
        qs = qs.filter(importance__gte=query.min_importance)
    return qs


def _tune_vector_search(pool_size: int) -> None:
    # Iterative scans keep filtered HNSW searches from coming back short (pgvector ≥ 0.8).
    # ef_search 150 rather than pgvector's 40: recall@10 0.95 → 0.96 for a 10k workspace
    # sharing the index with 100k others' rows, for < 1 ms; wider on larger tables
    # (ef_search_for; docs/BENCHMARKS.md).
    # Both in one statement (one round trip): set_config(…, true) is SET LOCAL.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)",
            [str(max(ef_search_for(_indexed_rows()), pool_size))],
        )


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


def _vector_candidates(
    base: QuerySet[Memory], vector: np.ndarray[Any, Any], pool_size: int, *, with_vectors: bool, exact: bool
) -> dict[uuid.UUID, Memory]:
    distance: Any = CosineDistance("embedding", vector)
    if exact:
        # Not the bare operator, so the planner cannot serve the order from the HNSW index (EXACT_SEARCH_FACTS).
        distance = ExpressionWrapper(distance * Value(1.0), output_field=FloatField())
    qs = base.filter(embedding__isnull=False).annotate(distance=distance).order_by("distance")[:pool_size]
    if not with_vectors:
        return {m.pk: m for m in qs.defer("embedding")}
    # In binary (memories/vectors.py): the top hits are compared with each other, and nearly all of them
    # are among these (on bench/recall.py's questions, all), so no second query fetches their vectors.
    return {m.pk: m for m in memories_with_vectors(qs)}


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


def _common_lexemes() -> dict[str, float]:
    """Lexemes in more than ``COMMON_LEXEME_SHARE`` of all facts and their share, from ANALYZE's statistics (cached)."""

    def fetch() -> dict[str, float]:
        with connection.cursor() as cursor:
            cursor.execute(
                """
                SELECT element, share
                FROM pg_stats
                JOIN pg_class ON pg_class.relname = pg_stats.tablename
                CROSS JOIN unnest(most_common_elems::text::text[], most_common_elem_freqs) AS s(element, share)
                WHERE tablename = 'memories_memory' AND attname = 'search_vector' AND element IS NOT NULL
                  AND share > %s AND share * pg_class.reltuples > %s
                """,
                [COMMON_LEXEME_SHARE, COMMON_LEXEME_MIN_FACTS],
            )
            return {row[0]: float(row[1]) for row in cursor.fetchall()}

    common: dict[str, float] = _table_statistic("common_lexemes", fetch)
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


@lru_cache(maxsize=32_768)
def _fact_terms(text: str) -> tuple[str, ...]:
    """A fact's ``bm25_terms``, kept: scoring reads every candidate's, the near-duplicate check the top hits' again."""
    return tuple(bm25_terms(text))


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
        found = Memory.objects.filter(pk__in=set(pending.values())).defer("search_vector")
        successors = {m.pk: m for m in memories_with_vectors(found)}
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
        and memory.importance >= query.min_importance
        and (not query.kinds or memory.kind in query.kinds)
        and (query.scope is None or memory.scope == query.scope)
        and (query.agent is None or memory.agent == query.agent)
        and (not query.tags_any or bool(set(query.tags_any) & set(memory.tags)))
        and (not query.tags_all or set(query.tags_all) <= set(memory.tags))
    )


def _lexical_scores(
    query: RecallQuery, pool: list[Memory], base: QuerySet[Memory], workspace: Workspace
) -> dict[uuid.UUID, float]:
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
    terms = bm25_terms(query.query, query=True)
    documents = {m.pk: _fact_terms(m.text) for m in pool}
    if not terms or not documents:
        return {}
    size = max(_workspace_size(workspace), len(documents))
    frequencies = _document_frequencies(base, sorted(set(terms)), size)
    return workspace_bm25(terms, documents, frequencies, size)


def workspace_bm25(
    query_terms: list[str],
    documents: Mapping[uuid.UUID, Sequence[str]],
    frequencies: dict[str, int],
    size: int,
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> dict[uuid.UUID, float]:
    """BM25 with IDF over the whole workspace, as a share of what a fact holding every query word scores.

    A fact that holds the query's rare words scores near 1 whatever else the
    pool holds; one sharing only a word half the workspace uses ("Caroline" in
    a conversation with Caroline) scores near 0. With pool-local IDF normalised
    to the pool's best, that best was 1 however weak its match: BM25 over the
    whole conversation beat the hub's hybrid by 9 points on raw turns (issue 22).
    A word no stored fact holds (the pool's own statistics do not know it either)
    counts as if one fact held it.
    """
    pool_frequency: Counter[str] = Counter()
    for terms in documents.values():
        pool_frequency.update(set(terms))
    unique = sorted(set(query_terms))
    idf = {}
    for term in unique:
        df = min(size, max(frequencies.get(term, 0), pool_frequency[term], 1))
        idf[term] = math.log(1 + (size - df + 0.5) / (df + 0.5))
    ideal = sum(idf.values())
    if ideal <= 0:
        return {}
    avg_len = sum(len(d) for d in documents.values()) / len(documents) or 1.0
    scores: dict[uuid.UUID, float] = {}
    for pk, terms in documents.items():
        counts = Counter(terms)
        score = 0.0
        for term in unique:
            tf = counts.get(term, 0)
            if tf:
                score += idf[term] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(terms) / avg_len))
        scores[pk] = min(1.0, score / ideal)
    return scores


def _document_frequencies(base: QuerySet[Memory], terms: list[str], size: int) -> dict[str, int]:
    """How many of the workspace's facts hold each term: the planner's share for common words, else counted.

    The count is one query over the facts holding any of the rare terms (the
    GIN index finds them; rare words are in few facts by definition); a common
    word's share of the whole table stands for its share of the workspace.
    """
    common = _common_lexemes()
    frequencies = {t: int(common[t] * size) for t in terms if t in common}
    rare = [t for t in terms if t not in common]
    if rare:
        queries = [SearchQuery(_quoted(t), search_type="raw", config="simple") for t in rare]
        any_term = SearchQuery(" | ".join(_quoted(t) for t in rare), search_type="raw", config="simple")
        counts = base.filter(search_vector=any_term).aggregate(
            **{f"t{i}": Count("pk", filter=Q(search_vector=q)) for i, q in enumerate(queries)}
        )
        frequencies.update({t: int(counts[f"t{i}"] or 0) for i, t in enumerate(rare)})
    return frequencies


def _workspace_size(workspace: Workspace) -> int:
    """The workspace's live facts (counted, then cached like the table statistics)."""

    def fetch() -> int:
        return Memory.objects.filter(workspace=workspace, status__in=LIVE_STATUSES).count()

    size: int = _table_statistic(f"workspace_size:{workspace.pk}", fetch)
    return size


def local_bm25(
    query_terms: list[str], documents: Mapping[uuid.UUID, Sequence[str]], *, k1: float = 1.2, b: float = 0.75
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


def reliability_factor(
    memory: Memory, as_of: dt.datetime | None = None, certainty: float = 1.0, *, past: bool = False
) -> float:
    """The score factor for the fact's reliability; a dispute mark's penalty scales with ``certainty``.

    ``past``: the query asks when something happened, and a superseded statement still tells that.
    """
    reliability = Reliability(memory.reliability)
    if past and reliability == Reliability.SUPERSEDED:
        reliability = Reliability.RELIABLE
    # Looking back, a fact superseded later was still the belief at the time.
    if (
        as_of is not None
        and reliability == Reliability.SUPERSEDED
        and (memory.superseded_at is None or memory.superseded_at > as_of)
    ):
        reliability = Reliability.RELIABLE
    factor = 1.0 - (1.0 - RELIABILITY_FACTOR[reliability]) * certainty
    return max(RELIABILITY_FLOOR, factor)


def _mark_certainty(candidates: list[Memory]) -> dict[uuid.UUID, float]:
    """How sure the hub is of each marked candidate's mark, from the records behind it (one query, if any).

    Marks: uncertain, contradicted, and superseded. Certain (1.0): a person
    answered (or skipped) a card about it, a reviewer or a rule settled it
    (a reviewer's resolution, confidence dominance, a supersede by the rules
    tier), or the detector gave no probability. An unreviewed classifier
    verdict — an open flag, or a temporal supersede the classifier decided on
    its own — counts ``UNREVIEWED_CERTAINTY`` × its probability. A supersede
    with no record behind it (a person's or an agent's explicit supersede) is certain.
    """
    marked = {m.pk: m for m in candidates if m.reliability in DISPUTED or m.superseded_by_id is not None}
    if not marked:
        return {}
    records = (
        Uncertainty.objects.filter(Q(memory_a_id__in=marked) | Q(memory_b_id__in=marked))
        .annotate(reviewed=Exists(Answer.objects.filter(card__uncertainty=OuterRef("pk"))))
        .values_list("memory_a_id", "memory_b_id", "resolution_strategy", "detector", "probability", "reviewed")
    )
    settled = {ResolutionStrategy.USER_CLARIFIED, ResolutionStrategy.CONFIDENCE_DOMINANCE}
    found: dict[uuid.UUID, float] = {}
    for a, b, strategy, detector, probability, reviewed in records:
        if reviewed or strategy in settled or probability is None or detector == "rules":
            certainty = 1.0
        else:
            certainty = UNREVIEWED_CERTAINTY * float(probability)
        for pk in (a, b):
            memory = marked.get(pk)
            if memory is None:
                continue
            # A superseded fact's mark is the supersede: only the record that decided it speaks for it.
            if memory.superseded_by_id is not None and strategy != ResolutionStrategy.TEMPORAL_SUPERSEDE:
                continue
            found[pk] = max(found.get(pk, 0.0), certainty)
    # A mark with no record behind it (set by hand, or by a job that keeps none) is taken as given.
    return {pk: found.get(pk, 1.0) for pk in marked}


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
    # In double precision, as the cosine of a vector parsed from text was (the float32s are the same).
    return float(np.dot(vector, np.asarray(memory.embedding, dtype=np.float64)))


def _has_vector(memory: Memory) -> bool:
    """Whether the fact's vector is loaded and present (never loads a deferred one).

    A deferred field is missing from the instance's ``__dict__``; that is what
    ``get_deferred_fields()`` checks, for every field (microseconds a call, ~100 calls a recall).
    """
    return memory.__dict__.get("embedding") is not None


def _score(
    memory: Memory,
    vector: np.ndarray[Any, Any],
    lexical: dict[uuid.UUID, float],
    weights: Weights,
    reference: dt.datetime,
    as_of: dt.datetime | None,
    certainty: dict[uuid.UUID, float],
    *,
    origin: Memory | None = None,
    past: bool = False,
) -> Hit:
    """Score one candidate; a chain head standing in for ``origin`` is at least as relevant as it.

    The superseded fact matched the query and its successor is the current
    answer to the same question, though often in other words ("moved from
    Bristol to Bath" for "lives in Bristol"): relevance (cosine, lexical) is
    the better of the two, everything else is the head's own.

    Recency is not in this score: it orders statements about one subject
    (:func:`_add_subject_recency`) once the top hits are compared.
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
        reliability_factor=reliability_factor(memory, as_of, certainty.get(memory.pk, 1.0), past=past),
    )
    linear = (
        weights.cosine * parts.cosine
        + weights.lexical * parts.lexical
        + weights.importance * parts.importance
        + weights.confidence * parts.confidence
    )
    return Hit(memory=memory, score=linear * parts.reliability_factor, parts=parts, reliability=memory.reliability)


def is_subject_lookup(text: str) -> bool:
    """A bare subject — a few words, no question mark — asks for that subject's current state."""
    return "?" not in text and 0 < len(text.split()) <= SUBJECT_LOOKUP_WORDS


def _add_subject_recency(
    hits: list[Hit],
    weight: float,
    period: Period | None,
    *,
    latest: bool = False,
    subject_cosine: float = DUPLICATE_COSINE,
    linked: Iterable[tuple[int, int]] = (),
) -> None:
    """Add ``weight`` × recency within the hit's subject to each hit's score (× its reliability factor).

    A subject is a set of hits with the same ``key``, or similar to each other
    (cosine ≥ ``subject_cosine``: near-duplicates, or for a bare subject lookup
    ``SUBJECT_LOOKUP_COSINE``), or ``linked`` (pairs of indexes read as one
    subject): statements of one thing at different times.
    The statement in effect — the newest, or for a query about a past month
    the last one made by then — counts 1; the others ``exp(−λ·days from it)``.
    A hit alone in its subject counts 1, so a new fact about something else
    gains nothing over an older answer.
    """
    if not hits:
        return
    if latest:
        # The query asks for the newest statement: recency across subjects, from the oldest compared hit
        # (0) to the newest (1). A linear ramp, not exp(−λ·days): with λ = 0.1/day only the newest
        # session counted (tuning conversations: "when did X last …" 0.510 against 0.714).
        dates = [h.effective_from.timestamp() for h in hits]
        first, last = min(dates), max(dates)
        for hit, when in zip(hits, dates, strict=True):
            within = (when - first) / (last - first) if last > first else 1.0
            hit.parts.subject_recency = within
            hit.score += weight * within * hit.parts.reliability_factor
        return
    keys = np.array([h.memory.key or "" for h in hits], dtype=object)
    same_subject = (_cosines(hits) >= subject_cosine) | ((keys[:, None] == keys[None, :]) & (keys != "")[:, None])
    for i, j in linked:
        same_subject[i, j] = same_subject[j, i] = True
    for indexes in _connected(same_subject):
        in_effect = max(indexes, key=lambda i: _effect_key(hits[i], period))
        for i in indexes:
            hit = hits[i]
            days = abs((hits[in_effect].memory.valid_from - hit.memory.valid_from).total_seconds()) / 86400
            within = math.exp(-settings.MEMORYHUB_DECAY_LAMBDA * days)
            hit.parts.subject_recency = within
            hit.score += weight * within * hit.parts.reliability_factor


def _another_value_read(hits: list[Hit], lookup: str = "") -> set[tuple[int, int]]:
    """(0, j): the later hits the readers read as another value of the first hit's subject.

    Only the first hit is read against the others, and only a claim a day or more newer than it: a
    lookup whose first hit is its newest statement reads nothing. A lookup that names an identifier
    ("PR #4412", "INC-2291 status") is answered by facts that name it: nothing is read unless the first
    hit names it, and a later hit that leaves it out is not read ("The fix for the login bug landed in PR
    #5120." is no newer state of PR #4412, whatever it says of the bug).
    """
    first = hits[0].memory if hits else None
    named = _identifiers_named(lookup)
    if first is None or not is_claim(first.speech_act) or not named <= _identifiers_named(first.text):
        return set()
    later = [
        j
        for j, hit in enumerate(hits[1:], start=1)
        if is_claim(hit.memory.speech_act)
        and hit.memory.valid_from - first.valid_from >= classifier.SAME_DAY
        and named <= _identifiers_named(hit.memory.text)
    ]
    readings = classifier.another_value_readings([(first, hits[j].memory) for j in later])
    return {(0, j) for j, changed in zip(later, readings, strict=True) if changed >= classifier.ONE_SLOT_CHANGE}


def _identifiers_named(text: str) -> set[str]:
    """The words of ``text`` with a digit in them, lower case, without the punctuation around them
    ("PR #4412" → {"4412"}, "db-eu-west-3.internal" → {"db-eu-west-3.internal"})."""
    return {word.strip(".,;:!?()[]'\"#").lower() for word in text.split() if _has_digit(word)} - {""}


def _answers_as_well(newer: Hit, older: Hit, weights: Weights) -> None:
    """``newer`` answers what ``older`` matched: as relevant as it, the way a chain head is (:func:`_score`)."""
    cosine, lexical = max(newer.parts.cosine, older.parts.cosine), max(newer.parts.lexical, older.parts.lexical)
    gain = weights.cosine * (cosine - newer.parts.cosine) + weights.lexical * (lexical - newer.parts.lexical)
    newer.parts.cosine, newer.parts.lexical = cosine, lexical
    newer.score += gain * newer.parts.reliability_factor


def _connected(linked: np.ndarray[Any, Any]) -> list[list[int]]:
    """The groups of indexes that ``linked`` (a symmetric boolean matrix) joins directly or through others.

    Each group in ascending order; groups by their first index. The pairs come
    from numpy (a few linked pairs among the ~435 of 30 hits), not from a
    Python loop over every pair.
    """
    group = list(range(len(linked)))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(linked, 1)), strict=True):
        group[root(int(j))] = root(int(i))
    members: dict[int, list[int]] = {}
    for i in range(len(linked)):
        members.setdefault(root(i), []).append(i)
    return list(members.values())


def query_period(text: str) -> Period | None:
    """The period a query names ("in May 2023", "summer 2023", "before March 2024"; recall/periods.py).

    Words relative to a moment ("in May", "last week") count from now.
    """
    return periods.query_period(text, reference=dt.datetime.now(dt.UTC))


def _in_effect_during(memory: Memory, period: Period) -> bool:
    """Whether the fact was in effect at some time of a period that has ended ("after May" keeps nothing)."""
    return (
        period.end < LATEST
        and memory.valid_from < period.end
        and (memory.valid_to is None or memory.valid_to > period.start)
    )


def _effect_key(hit: Hit, period: Period | None) -> tuple[bool, float]:
    """Larger for the statement in effect: the newest, or for a past month the last made by its end.

    A fact that dates itself in its text ("moved to Porto in May 2023") counts from that month.
    """
    when = hit.effective_from
    if period is None:
        return (True, when.timestamp())
    by_then = when < period.end
    return (by_then, when.timestamp() if by_then else -when.timestamp())


@lru_cache(maxsize=65_536)
def _stated(text: str, said_at: dt.datetime) -> dt.datetime | None:
    return stated_date(text, said_at)


def _diverse(hits: list[Hit], k: int, period: Period | None = None) -> list[Hit]:
    """Collapse near-duplicates (cosine ≥ 0.8) that say the same thing to one member, keeping k results.

    Two near-duplicates say the same thing when one's words hold no more than
    one term the other lacks on each side: a restatement, or one value changed
    (an answer and its update: "the Growth plan costs $29" / "$39"). Facts with the
    same ``key`` are always one subject; with different keys, never. Two
    similar sentences that differ in more ("Ana travelled to Kyoto for the
    cherry blossoms" / "Bo travelled to Oaxaca for the Day of the Dead") carry
    different information and both stay.

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
        chosen = _collapse(hits[:limit], k, period)
        if len(chosen) >= k or limit == len(hits):
            return chosen
        limit = min(len(hits), limit + COMPARED_HITS)


def _collapse(hits: list[Hit], k: int, period: Period | None = None) -> list[Hit]:
    similar = _near_duplicates(hits)
    chosen: list[int] = []  # indexes into hits
    dropped: list[int] = []
    for i, hit in enumerate(hits):
        slot = next((n for n, j in enumerate(chosen) if similar[i, j]), None)
        if slot is None:
            # An older copy of a statement dropped above is outdated, not a fresh result.
            if len(chosen) < k and not any(similar[i, j] and _updates(hits[j], hit, period) for j in dropped):
                chosen.append(i)
            continue
        if _preferred(hit, hits[chosen[slot]], period):
            dropped.append(chosen[slot])
            chosen[slot] = i
        else:
            dropped.append(i)
    return [hits[i] for i in chosen]


def _newer_first(hits: list[Hit], period: Period | None = None) -> list[Hit]:
    """Two statements that answer the same question about equally well: the newer one goes first.

    "Who runs the platform team?" — "Ana runs it" (March) and "Bo runs it"
    (June) are similar (cosine ≥ ``SAME_QUESTION_COSINE``, or
    ``SAME_STREAM_QUESTION_COSINE`` when one agent wrote both in one scope),
    equally confident and score within ``SAME_SCORE``: recency alone barely
    separates facts that are both old, so the later statement is moved just
    above the earlier one. A clearly better match keeps its place. For a
    query about a past month, "newer" is the statement in effect then.
    """
    if len(hits) < 2:
        return hits
    cosine = _cosines(hits)
    ordered = list(range(len(hits)))
    for j in range(1, len(hits)):
        position = ordered.index(j)
        for slot in range(position):
            i = ordered[slot]
            if _same_question(hits[i], hits[j], cosine[i, j]) and _updates(hits[j], hits[i], period):
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


def _updates(newer: Hit, older: Hit, period: Period | None = None) -> bool:
    return (
        _effect_key(newer, period) > _effect_key(older, period)
        and abs(newer.memory.confidence - older.memory.confidence) <= SAME_CONFIDENCE
        and older.score - newer.score <= SAME_SCORE
    )


def _near_duplicates(hits: list[Hit]) -> np.ndarray[Any, Any]:
    """Which pairs of hits are near-duplicates that say the same thing (see :func:`_diverse`)."""
    similar: np.ndarray[Any, Any] = _cosines(hits) >= DUPLICATE_COSINE
    terms = [set(_fact_terms(h.memory.text)) for h in hits]
    for i, j in zip(*np.nonzero(similar), strict=True):
        if i < j and not _same_information(hits[i].memory, hits[j].memory, terms[i], terms[j]):
            similar[i, j] = similar[j, i] = False
    return similar


def _same_information(a: Memory, b: Memory, a_terms: set[str], b_terms: set[str]) -> bool:
    """A restatement or an update of one value: at most one term on each side the other lacks."""
    if a.key and b.key:
        return a.key == b.key
    return len(a_terms - b_terms) <= 1 and len(b_terms - a_terms) <= 1


def _cosines(hits: list[Hit]) -> np.ndarray[Any, Any]:
    """Cosine between every two hits (one matrix product; a hit without an embedding matches nothing)."""
    vectors = np.zeros((len(hits), DIMENSIONS), dtype=np.float32)
    for i, hit in enumerate(hits):
        if _has_vector(hit.memory):
            vectors[i] = hit.memory.embedding  # a float32 array (memories/vectors.py): a row copy
    cosines: np.ndarray[Any, Any] = vectors @ vectors.T
    return cosines


def _preferred(candidate: Hit, kept: Hit, period: Period | None = None) -> bool:
    new, old = candidate.memory, kept.memory
    if abs(new.confidence - old.confidence) > SAME_CONFIDENCE:
        return new.confidence > old.confidence
    return kept.score - candidate.score <= SAME_SCORE and _effect_key(candidate, period) > _effect_key(kept, period)


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
                "search_vector", "embedding"
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
    """Attach open uncertainties and, for contradictions, the memories on the other side.

    The records are read without their memories: most answers have none, and
    joining both sides cost about a millisecond of planning every time. The
    other sides, when there are any, come in one more query.
    """
    by_id = {h.memory.pk: h for h in hits}
    if not by_id:
        return
    open_states = [UncertaintyState.OPEN, UncertaintyState.SURFACED]
    records = Uncertainty.objects.filter(
        Q(memory_a_id__in=by_id) | Q(memory_b_id__in=by_id), state__in=open_states
    ).values_list("pk", "memory_a_id", "memory_b_id", "uncertainty_type")
    # (the hit's memory, the memory on the other side), in the order they are listed
    other_sides: list[tuple[uuid.UUID, uuid.UUID]] = []
    for pk, a, b, kind in records:
        for side, other in ((a, b), (b, a)):
            if side not in by_id:
                continue
            by_id[side].open_uncertainties.append(pk)
            if kind == UncertaintyType.CONTRADICTION and other is not None:
                other_sides.append((side, other))
    linked: list[tuple[uuid.UUID, uuid.UUID]] = []
    contradicted = [h.memory.pk for h in hits if h.reliability == Reliability.CONTRADICTED]
    if contradicted:
        links = Link.objects.filter(rel="contradicts").filter(Q(src_id__in=contradicted) | Q(dst_id__in=contradicted))
        for src, dst in links.values_list("src_id", "dst_id"):
            linked += [(src, dst), (dst, src)]
    wanted = {other for _, other in other_sides + linked}
    if not wanted:
        return
    # Shown by id, text, agent and date: their vectors and tsvectors stay in the table.
    others = {m.pk: m for m in Memory.objects.filter(pk__in=wanted).defer("embedding", "search_vector")}
    for side, other in other_sides:
        if other in others:
            by_id[side].contradicted_by.append(others[other])
    for side, other in linked:
        flagged = by_id.get(side)
        if flagged is not None and other in others and all(m.pk != other for m in flagged.contradicted_by):
            flagged.contradicted_by.append(others[other])


# Both statements in one round trip (psycopg binds the parameters on the client and sends one simple query).
_TOUCH = f"""
    SET LOCAL synchronous_commit = off;
    UPDATE {Memory._meta.db_table}
    SET access_count = access_count + 1, last_accessed_at = statement_timestamp()
    WHERE id = ANY(%s)
"""  # noqa: S608 - the table name is ours, the ids are a parameter


def _touch(ids: list[uuid.UUID]) -> None:
    """Count the access. Access counters never feed the score, so a repeated query keeps its order.

    Bookkeeping, not a fact: the commit does not wait for the WAL flush
    (``synchronous_commit = off`` for recall's transaction, whose only write
    this is), so a crash can lose the last few counts but recall never waits
    on the disk. The columns are in no index and the table leaves room on its
    pages, so the update is heap-only (no index writes).
    """
    if not ids:
        return
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(_TOUCH, [ids])
