"""``MemoryHub`` (sync) and ``AsyncMemoryHub`` (async): the same methods, over httpx.

Every method is one request (the batch and the ``iter_*`` helpers, several),
sent by ``_send``: it retries per :class:`RetryPolicy`, gives a write one
``Idempotency-Key`` reused by all its retries (so a retry after a lost answer
is replayed by the hub, not applied twice), and turns an error status into the
typed exception of ``memoryhub_client.errors``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from memoryhub_client import _calls
from memoryhub_client._calls import Call, Id
from memoryhub_client.errors import HubConnectionError, error_for, retry_after_seconds
from memoryhub_client.models import (
    AnswerResult,
    BatchItem,
    BatchResult,
    Card,
    Chain,
    Change,
    CheckActionResult,
    CommitResult,
    Context,
    DetectiveRun,
    Event,
    FoundConflict,
    Link,
    Memory,
    MemoryPage,
    Neighbors,
    NewMemory,
    PipelineStatus,
    RecallHit,
    Subgraph,
    SurfacedUncertainty,
    Uncertainty,
    parse,
)
from memoryhub_client.retries import RetryPolicy

T = TypeVar("T")
API_PREFIX = "/api/v1"
USER_AGENT = "memoryhub-client/0.1"
IDEMPOTENCY_HEADER = "Idempotency-Key"
PAGE_SIZE = 200  # the API's largest page


@dataclass(frozen=True)
class RetryEvent:
    """What ``on_retry`` is told before each wait: why the attempt failed and how long the client waits."""

    method: str
    path: str
    attempt: int
    delay: float
    status_code: int | None
    retry_after: float | None
    error: Exception | None
    idempotency_key: str | None


class _Settings:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        retry: RetryPolicy | None,
        on_retry: Callable[[RetryEvent], None] | None,
    ) -> None:
        base = base_url.rstrip("/")
        self.base_url = base if base.endswith(API_PREFIX) else base + API_PREFIX
        self.headers = {"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT, "Accept": "application/json"}
        self.retry = retry or RetryPolicy()
        self.on_retry = on_retry

    def request_headers(self, idempotency_key: str | None) -> dict[str, str]:
        return {IDEMPOTENCY_HEADER: idempotency_key} if idempotency_key else {}

    def announce(
        self, call: Call, attempt: int, delay: float, outcome: httpx.Response | Exception, key: str | None
    ) -> None:
        if self.on_retry is None:
            return
        response = outcome if isinstance(outcome, httpx.Response) else None
        self.on_retry(
            RetryEvent(
                method=call.method,
                path=call.path,
                attempt=attempt,
                delay=delay,
                status_code=response.status_code if response is not None else None,
                retry_after=retry_after_seconds(response) if response is not None else None,
                error=outcome if isinstance(outcome, Exception) else None,
                idempotency_key=key,
            )
        )


def _new_key(call: Call) -> str | None:
    return str(uuid.uuid4()) if call.write else None


def _memory_fields(text: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    return {"text": text, **fields}


def _merge_batches(parts: list[tuple[int, BatchResult]]) -> BatchResult:
    """One result for the whole list: each part's indices shifted by where its chunk started."""
    results = [
        BatchItem(
            index=start + item.index,
            action=item.action,
            id=item.id,
            status=item.status,
            errors=[_shift_loc(error, start) for error in item.errors],
        )
        for start, part in parts
        for item in part.results
    ]
    return BatchResult(
        stored=sum(p.stored for _, p in parts),
        merged=sum(p.merged for _, p in parts),
        rejected=sum(p.rejected for _, p in parts),
        results=results,
    )


def _shift_loc(error: dict[str, Any], start: int) -> dict[str, Any]:
    """``["body", "memories", 3, "text"]`` of the request's chunk → the item's index in the caller's whole list."""
    loc = list(error.get("loc", []))
    if len(loc) > 2 and loc[:2] == ["body", "memories"] and isinstance(loc[2], int):
        loc[2] += start
    return {**error, "loc": loc}


class MemoryHub:
    """Synchronous client. ``base_url`` is the hub's address (``http://localhost:8000``); ``api_key`` an agent key.

    Use it as a context manager, or call :meth:`close`, to release its connections.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        on_retry: Callable[[RetryEvent], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._settings = _Settings(base_url, api_key, retry, on_retry)
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=self._settings.base_url, headers=self._settings.headers, timeout=timeout, transport=transport
        )

    def __enter__(self) -> MemoryHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _send(self, call: Call) -> httpx.Response:
        key = _new_key(call)
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._http.request(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.json,
                    headers=self._settings.request_headers(key),
                )
            except httpx.TransportError as exc:
                delay = self._settings.retry.delay_after_error(exc, attempt)
                if delay is None:
                    raise HubConnectionError(f"{call.method} {call.path}: {exc!r} (attempt {attempt})") from exc
                self._settings.announce(call, attempt, delay, exc, key)
                self._sleep(delay)
                continue
            if response.is_success:
                return response
            delay = self._settings.retry.delay_after_response(response, attempt)
            if delay is None:
                raise error_for(response)
            self._settings.announce(call, attempt, delay, response, key)
            self._sleep(delay)

    def _get(self, call: Call, model: type[T]) -> T:
        return parse(model, self._send(call).json())

    def _list(self, call: Call, model: type[T]) -> list[T]:
        return [parse(model, item) for item in self._send(call).json()]

    # ---------------------------------------------------------------- memories

    def remember(self, text: str, **fields: Any) -> CommitResult:
        """Commit a fact (``POST /memories``). Fields: kind, key, scope, tags, source, agent, importance,
        confidence, polarity, valid_from, metadata, on_conflict. With ``on_conflict="raise"`` a clash raises
        :class:`~memoryhub_client.errors.CommitRejected` carrying the conflicts."""
        return self._get(_calls.remember(_memory_fields(text, fields)), CommitResult)

    commit = remember

    def remember_batch(
        self, memories: Sequence[NewMemory | Mapping[str, Any]], *, batch_size: int = 1000
    ) -> BatchResult:
        """Commit many facts, ``batch_size`` (≤ 1,000) per request; results are indexed into ``memories``."""
        parts = [
            (start * batch_size, self._get(_calls.remember_batch(chunk), BatchResult))
            for start, chunk in enumerate(_calls.chunks(memories, batch_size))
        ]
        return _merge_batches(parts)

    commit_batch = remember_batch

    def get_memory(self, memory_id: Id) -> Memory:
        return self._get(_calls.get_memory(memory_id), Memory)

    def list_memories(self, **filters: Any) -> MemoryPage:
        """One page of ``GET /memories``: kind, scope, key, agent, source, reliability, status, tag, tags_all, q,
        include_superseded, recorded_after, recorded_before, limit, offset."""
        return self._get(_calls.list_memories(filters), MemoryPage)

    def iter_memories(self, **filters: Any) -> Iterator[Memory]:
        """Every memory matching ``filters``, page after page (``limit`` sets the page size)."""
        filters = {"limit": PAGE_SIZE, **filters}
        while True:
            page = self.list_memories(**filters)
            yield from page.items
            if page.next_offset is None:
                return
            filters["offset"] = page.next_offset

    def forget(self, memory_id: Id) -> Change:
        return self._get(_calls.forget(memory_id), Change)

    def supersede(self, memory_id: Id, *, by: Id, reason: str = "") -> Change:
        """Mark ``memory_id`` as replaced by ``by``."""
        return self._get(_calls.supersede(memory_id, by, reason), Change)

    def restore(self, memory_id: Id, *, reason: str = "") -> Change:
        """Undo a supersede and/or a forget."""
        return self._get(_calls.restore(memory_id, reason), Change)

    def reinforce(self, memory_id: Id, *, reason: str = "") -> Memory:
        return self._get(_calls.reinforce(memory_id, reason), Memory)

    def correct_subject(self, memory_id: Id, *, entity: str, attribute: str = "", note: str = "") -> Memory:
        """Set what a memory is about; the hub keeps it over re-embedding and as training data."""
        return self._get(_calls.correct_subject(memory_id, entity, attribute, note), Memory)

    def chain(self, memory_id: Id) -> Chain:
        return self._get(_calls.chain(memory_id), Chain)

    def neighbors(
        self, memory_id: Id, *, rel: Iterable[str] | None = None, direction: str = "both", depth: int = 1
    ) -> Neighbors:
        return self._get(_calls.neighbors(memory_id, rel, direction, depth), Neighbors)

    def link(self, src: Id, dst: Id, *, rel: str = "related", weight: float = 1.0) -> Link:
        return self._get(_calls.link(src, dst, rel, weight), Link)

    def unlink(self, link_id: int) -> None:
        self._send(_calls.unlink(link_id))

    def subgraph(self, memory_ids: Iterable[Id], *, depth: int = 1) -> Subgraph:
        """The memories within ``depth`` links of ``memory_ids`` (either direction) and their links."""
        return self._get(_calls.subgraph(memory_ids, depth), Subgraph)

    # ---------------------------------------------------------------- recall

    def recall(self, query: str, **options: Any) -> list[RecallHit]:
        """Hybrid recall: k, mode, weights, kind, scope, agent, tags, tags_all, min_confidence, include_superseded,
        as_of, expand, diversity, lexical."""
        return self._list(_calls.recall(query, options), RecallHit)

    def context(self, recent_messages: Sequence[Mapping[str, str]], **options: Any) -> Context:
        """Passive context for the next turn: tool_results, budget_tokens, facts, episodes, scope."""
        return self._get(_calls.context(recent_messages, options), Context)

    def check_action(self, memory_ids: Iterable[Id]) -> CheckActionResult:
        """Is each memory safe to act on?"""
        return self._get(_calls.check_action(memory_ids), CheckActionResult)

    # ---------------------------------------------------------------- conflicts and uncertainties

    def conflicts(self, **filters: Any) -> list[Card]:
        """One page of cards, newest first: state, kind, limit, offset."""
        return self._list(_calls.list_conflicts(filters), Card)

    def iter_conflicts(self, **filters: Any) -> Iterator[Card]:
        return _pages(self.conflicts, filters)

    def get_conflict(self, card_id: Id) -> Card:
        return self._get(_calls.get_conflict(card_id), Card)

    def answer_conflict(
        self, card_id: Id, answer: str, *, current_fact: Id | None = None, note: str = ""
    ) -> AnswerResult:
        """yes / no / both / skip (needs the key's ``answer`` scope)."""
        return self._get(_calls.answer_conflict(card_id, answer, current_fact, note), AnswerResult)

    def uncertainties(self, **filters: Any) -> list[Uncertainty]:
        """One page of uncertainty records: state, memory, limit, offset."""
        return self._list(_calls.list_uncertainties(filters), Uncertainty)

    def iter_uncertainties(self, **filters: Any) -> Iterator[Uncertainty]:
        return _pages(self.uncertainties, filters)

    def surface_uncertainties(self, topic: str, *, limit: int = 5) -> list[SurfacedUncertainty]:
        """Open disputes relevant to ``topic``, each with a clarifying question."""
        return self._list(_calls.surface_uncertainties(topic, limit), SurfacedUncertainty)

    def events(self, **filters: Any) -> list[Event]:
        """One page of the audit trail: automatic, verb, memory, limit, offset."""
        return self._list(_calls.list_events(filters), Event)

    def iter_events(self, **filters: Any) -> Iterator[Event]:
        return _pages(self.events, filters)

    def undo_event(self, event_id: int, *, reason: str = "") -> Event:
        """Undo a recorded change, e.g. an automatic supersede (needs the key's ``admin`` scope)."""
        return self._get(_calls.undo_event(event_id, reason), Event)

    def find_conflicts(
        self, memory_id: Id | None = None, *, threshold: float | None = None, limit: int | None = None
    ) -> list[FoundConflict]:
        """Similar pairs read as duplicates or contradictions: of one memory, or the workspace's newest."""
        return self._list(_calls.find_conflicts(memory_id, threshold, limit), FoundConflict)

    def run_detective(self) -> DetectiveRun:
        """Queue a narrative pass over the workspace's history (``admin`` scope); it runs on the worker."""
        return self._get(_calls.run_detective(), DetectiveRun)

    def detective_runs(self) -> list[DetectiveRun]:
        return self._list(_calls.detective_runs(), DetectiveRun)

    def status(self) -> PipelineStatus:
        """How far behind embedding and checking are."""
        return self._get(_calls.status(), PipelineStatus)


def _pages(fetch: Callable[..., list[T]], filters: dict[str, Any]) -> Iterator[T]:
    """Walk a plain-list endpoint by offset until a page comes back short."""
    filters = {"limit": PAGE_SIZE, "offset": 0, **filters}
    while True:
        page = fetch(**filters)
        yield from page
        if len(page) < filters["limit"]:
            return
        filters["offset"] += len(page)


class AsyncMemoryHub:
    """The asynchronous client: the methods of :class:`MemoryHub`, awaitable; ``iter_*`` are async iterators."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        on_retry: Callable[[RetryEvent], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._settings = _Settings(base_url, api_key, retry, on_retry)
        self._sleep = sleep
        self._http = httpx.AsyncClient(
            base_url=self._settings.base_url, headers=self._settings.headers, timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> AsyncMemoryHub:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _send(self, call: Call) -> httpx.Response:
        key = _new_key(call)
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._http.request(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.json,
                    headers=self._settings.request_headers(key),
                )
            except httpx.TransportError as exc:
                delay = self._settings.retry.delay_after_error(exc, attempt)
                if delay is None:
                    raise HubConnectionError(f"{call.method} {call.path}: {exc!r} (attempt {attempt})") from exc
                self._settings.announce(call, attempt, delay, exc, key)
                await self._sleep(delay)
                continue
            if response.is_success:
                return response
            delay = self._settings.retry.delay_after_response(response, attempt)
            if delay is None:
                raise error_for(response)
            self._settings.announce(call, attempt, delay, response, key)
            await self._sleep(delay)

    async def _get(self, call: Call, model: type[T]) -> T:
        return parse(model, (await self._send(call)).json())

    async def _list(self, call: Call, model: type[T]) -> list[T]:
        return [parse(model, item) for item in (await self._send(call)).json()]

    async def remember(self, text: str, **fields: Any) -> CommitResult:
        return await self._get(_calls.remember(_memory_fields(text, fields)), CommitResult)

    commit = remember

    async def remember_batch(
        self, memories: Sequence[NewMemory | Mapping[str, Any]], *, batch_size: int = 1000
    ) -> BatchResult:
        parts = [
            (start * batch_size, await self._get(_calls.remember_batch(chunk), BatchResult))
            for start, chunk in enumerate(_calls.chunks(memories, batch_size))
        ]
        return _merge_batches(parts)

    commit_batch = remember_batch

    async def get_memory(self, memory_id: Id) -> Memory:
        return await self._get(_calls.get_memory(memory_id), Memory)

    async def list_memories(self, **filters: Any) -> MemoryPage:
        return await self._get(_calls.list_memories(filters), MemoryPage)

    async def iter_memories(self, **filters: Any) -> AsyncIterator[Memory]:
        filters = {"limit": PAGE_SIZE, **filters}
        while True:
            page = await self.list_memories(**filters)
            for item in page.items:
                yield item
            if page.next_offset is None:
                return
            filters["offset"] = page.next_offset

    async def forget(self, memory_id: Id) -> Change:
        return await self._get(_calls.forget(memory_id), Change)

    async def supersede(self, memory_id: Id, *, by: Id, reason: str = "") -> Change:
        return await self._get(_calls.supersede(memory_id, by, reason), Change)

    async def restore(self, memory_id: Id, *, reason: str = "") -> Change:
        return await self._get(_calls.restore(memory_id, reason), Change)

    async def reinforce(self, memory_id: Id, *, reason: str = "") -> Memory:
        return await self._get(_calls.reinforce(memory_id, reason), Memory)

    async def correct_subject(self, memory_id: Id, *, entity: str, attribute: str = "", note: str = "") -> Memory:
        return await self._get(_calls.correct_subject(memory_id, entity, attribute, note), Memory)

    async def chain(self, memory_id: Id) -> Chain:
        return await self._get(_calls.chain(memory_id), Chain)

    async def neighbors(
        self, memory_id: Id, *, rel: Iterable[str] | None = None, direction: str = "both", depth: int = 1
    ) -> Neighbors:
        return await self._get(_calls.neighbors(memory_id, rel, direction, depth), Neighbors)

    async def link(self, src: Id, dst: Id, *, rel: str = "related", weight: float = 1.0) -> Link:
        return await self._get(_calls.link(src, dst, rel, weight), Link)

    async def unlink(self, link_id: int) -> None:
        await self._send(_calls.unlink(link_id))

    async def subgraph(self, memory_ids: Iterable[Id], *, depth: int = 1) -> Subgraph:
        return await self._get(_calls.subgraph(memory_ids, depth), Subgraph)

    async def recall(self, query: str, **options: Any) -> list[RecallHit]:
        return await self._list(_calls.recall(query, options), RecallHit)

    async def context(self, recent_messages: Sequence[Mapping[str, str]], **options: Any) -> Context:
        return await self._get(_calls.context(recent_messages, options), Context)

    async def check_action(self, memory_ids: Iterable[Id]) -> CheckActionResult:
        return await self._get(_calls.check_action(memory_ids), CheckActionResult)

    async def conflicts(self, **filters: Any) -> list[Card]:
        return await self._list(_calls.list_conflicts(filters), Card)

    def iter_conflicts(self, **filters: Any) -> AsyncIterator[Card]:
        return _async_pages(self.conflicts, filters)

    async def get_conflict(self, card_id: Id) -> Card:
        return await self._get(_calls.get_conflict(card_id), Card)

    async def answer_conflict(
        self, card_id: Id, answer: str, *, current_fact: Id | None = None, note: str = ""
    ) -> AnswerResult:
        return await self._get(_calls.answer_conflict(card_id, answer, current_fact, note), AnswerResult)

    async def uncertainties(self, **filters: Any) -> list[Uncertainty]:
        return await self._list(_calls.list_uncertainties(filters), Uncertainty)

    def iter_uncertainties(self, **filters: Any) -> AsyncIterator[Uncertainty]:
        return _async_pages(self.uncertainties, filters)

    async def surface_uncertainties(self, topic: str, *, limit: int = 5) -> list[SurfacedUncertainty]:
        return await self._list(_calls.surface_uncertainties(topic, limit), SurfacedUncertainty)

    async def events(self, **filters: Any) -> list[Event]:
        return await self._list(_calls.list_events(filters), Event)

    def iter_events(self, **filters: Any) -> AsyncIterator[Event]:
        return _async_pages(self.events, filters)

    async def undo_event(self, event_id: int, *, reason: str = "") -> Event:
        return await self._get(_calls.undo_event(event_id, reason), Event)

    async def find_conflicts(
        self, memory_id: Id | None = None, *, threshold: float | None = None, limit: int | None = None
    ) -> list[FoundConflict]:
        return await self._list(_calls.find_conflicts(memory_id, threshold, limit), FoundConflict)

    async def run_detective(self) -> DetectiveRun:
        return await self._get(_calls.run_detective(), DetectiveRun)

    async def detective_runs(self) -> list[DetectiveRun]:
        return await self._list(_calls.detective_runs(), DetectiveRun)

    async def status(self) -> PipelineStatus:
        return await self._get(_calls.status(), PipelineStatus)


async def _async_pages(fetch: Callable[..., Awaitable[list[T]]], filters: dict[str, Any]) -> AsyncIterator[T]:
    filters = {"limit": PAGE_SIZE, "offset": 0, **filters}
    while True:
        page = await fetch(**filters)
        for item in page:
            yield item
        if len(page) < filters["limit"]:
            return
        filters["offset"] += len(page)


__all__ = ["AsyncMemoryHub", "MemoryHub", "RetryEvent"]
