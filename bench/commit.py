"""Commit latency and embedding throughput with 100k memories in the workspace (issue 2).

    .venv/bin/python bench/commit.py [--memories 100000] [--agents 8] [--commits 2000] [--embed-texts 2000]

1. Seeds the dedicated workspace ``bench-commit`` up to ``--memories`` active
   facts (COPY, random unit-norm embeddings so the HNSW index has its real size).
2. Starts the web process (uvicorn) on a free local port, 2 workers × 4 threads as `make run` does,
   with Celery pointed at its own broker database so no running worker takes the
   benchmark's tasks.
3. ``--agents`` threads, one agent key and one keep-alive connection each, POST
   ``--commits`` facts to /api/v1/memories; client latency and the server's own
   time (the ``Server-Timing`` header) are recorded per request.
4. Purges the queued embedding tasks, then embeds the pending facts through the
   worker's code path (``memories_embed_pending``) and times the raw embedder.

docs/BENCHMARKS.md holds the results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import random
import re
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

from bench.common import cpu_model, free_port, load_average, migrate_database, percentile, verdict, web_server  # noqa: E402
from memories.embeddings import DIMENSIONS, get_embedder  # noqa: E402
from memories.models import Memory, Status  # noqa: E402
from memories.services import memories_embed_pending  # noqa: E402
from memoryhub.celery import app as celery_app  # noqa: E402
from memoryhub.settings import broker_url_on_database  # noqa: E402
from workspaces.models import AgentKey, Workspace  # noqa: E402
from workspaces.services import agent_key_create, agent_key_revoke, workspace_get_or_create  # noqa: E402

WORKSPACE_SLUG = "bench-commit"
# Its own queue database: a `make run` worker never sees the benchmark's tasks, and purging it touches nothing else.
BROKER_DATABASE = "memoryhub_broker_bench"
SEED_CHUNK = 5_000
SEED_MODEL = "bench-random-unit"
TARGETS = {"server_p50": 10.0, "server_p99": 30.0, "embed_texts_per_s": 250.0}
SERVER_TIMING = re.compile(r"(?:^|,)\s*app;dur=([0-9.]+)")

# --- Realistic short facts ------------------------------------------------------------------------------------

SERVICES = ["billing", "search", "auth", "checkout", "ingest", "reporting", "notifications", "payments", "catalog"]
PEOPLE = ["Alice", "Bob", "Priya", "Chen", "Maria", "Tom", "Aisha", "Lukas", "Sofia", "Kenji", "the user"]
TEAMS = ["platform", "data", "mobile", "growth", "infra", "security", "frontend"]
THINGS = ["green tea", "dark mode", "short answers", "Python", "Rust", "Postgres", "tabs", "metric units", "Vim"]
CITIES = ["Berlin", "Lisbon", "Toronto", "Osaka", "Nairobi", "Austin", "Warsaw", "Dublin", "Singapore"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
ENVS = ["staging", "production", "the EU cluster", "the US cluster", "the canary fleet"]
TEMPLATES = [
    "The {svc} API rate limit is {n} requests per second",
    "{person} prefers {thing}",
    "{person} moved to {city} in {year}",
    "Deploys to {env} are frozen on {day} afternoons",
    "The {team} team owns the {svc} service",
    "{person} is on call for {svc} this week",
    "The {svc} database runs on Postgres {pg} with {n} GB of RAM",
    "Invoices older than {n} days are archived to cold storage",
    "{person} asked to be reminded about the {svc} migration on {day}",
    "The {svc} service times out after {n} ms when {env} is under load",
    "{person}'s favourite editor is {thing}",
    "Feature flags for {svc} are reviewed by the {team} team every {day}",
    "The {team} team's standup is at {hour}:{minute:02d} {city} time",
    "Customer {n} reported that {svc} emails arrive twice",
    "The {svc} job retries {small} times with exponential backoff",
]
TAGS = ["ops", "preference", "infra", "billing", "people", "schedule", "incident", "policy", "api"]


def fact_text(rng: random.Random) -> str:
    template = rng.choice(TEMPLATES)
    return template.format(
        svc=rng.choice(SERVICES),
        person=rng.choice(PEOPLE),
        team=rng.choice(TEAMS),
        thing=rng.choice(THINGS),
        city=rng.choice(CITIES),
        day=rng.choice(DAYS),
        env=rng.choice(ENVS),
        year=rng.randint(2015, 2026),
        n=rng.randint(2, 5000),
        pg=rng.randint(13, 18),
        hour=rng.randint(8, 11),
        minute=rng.choice([0, 15, 30, 45]),
        small=rng.randint(2, 9),
    )


def fact_body(rng: random.Random) -> dict[str, object]:
    """One commit as an agent would send it: text, a tag or two, sometimes a scope."""
    body: dict[str, object] = {"text": fact_text(rng), "tags": rng.sample(TAGS, rng.randint(0, 2))}
    if rng.random() < 0.5:
        body["scope"] = f"project-{rng.randint(1, 20)}"
    if rng.random() < 0.3:
        body["source"] = rng.choice(["inferred", "researched"])
    body["importance"] = round(rng.uniform(0.2, 0.9), 2)
    return body


# --- Measuring ------------------------------------------------------------------------------------------------


def pstats(values: list[float]) -> str:
    return " / ".join(f"{percentile(values, q):6.1f}" for q in (50, 95, 99))


@dataclass
class CommitResults:
    client_ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    failures: int = 0
    failure_samples: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, client_ms: float, server_ms: float | None) -> None:
        with self.lock:
            self.client_ms.append(client_ms)
            if server_ms is not None:
                self.server_ms.append(server_ms)

    def fail(self, why: str) -> None:
        with self.lock:
            self.failures += 1
            if len(self.failure_samples) < 5:
                self.failure_samples.append(why)


@dataclass
class EmbedResults:
    worker_texts: int = 0
    worker_s: float = 0.0
    raw_texts: int = 0
    raw_s: float = 0.0
    model_load_s: float = 0.0


# --- 1. Seeding -----------------------------------------------------------------------------------------------


SEED_COLUMNS = [
    "id",
    "workspace_id",
    "kind",
    "text",
    "key",
    "scope",
    "tags",
    "source",
    "agent",
    "metadata",
    "importance",
    "confidence",
    "reliability",
    "status",
    "polarity",
    "annotation",
    "embedding",
    "embedding_model",
    "embedded_at",
    "access_count",
    "reinforcement_count",
    "conflict_count",
    "valid_from",
    "recorded_at",
    "updated_at",
]


def seed_row(rng: random.Random, *, workspace_id: int, vector: list[float], recorded: dt.datetime) -> list[object]:
    """The values of SEED_COLUMNS for one active, already embedded fact."""
    return [
        uuid.uuid4(),
        workspace_id,
        "fact" if rng.random() < 0.85 else rng.choice(["trait", "episode", "procedure"]),
        fact_text(rng),
        "",
        f"project-{rng.randint(1, 20)}" if rng.random() < 0.5 else "",
        rng.sample(TAGS, rng.randint(0, 2)),
        "explicit",
        f"agent-{rng.randint(1, 30)}",
        "{}",
        round(rng.uniform(0.2, 0.9), 2),
        0.9,
        "reliable",
        Status.ACTIVE.value,
        0,
        "",
        "[" + ",".join(f"{x:.6f}" for x in vector) + "]",
        SEED_MODEL,
        recorded,
        0,
        0,
        0,
        recorded,
        recorded,
        recorded,
    ]


def seed(workspace: Workspace, target: int) -> int:
    """Top the workspace up to ``target`` active memories; returns how many it holds now."""
    have = Memory.objects.filter(workspace=workspace).count()
    missing = target - have
    if missing <= 0:
        print(f"workspace {workspace.slug}: {have:,} memories, no seeding needed")
        return have
    print(f"workspace {workspace.slug}: {have:,} memories, seeding {missing:,} (COPY in chunks of {SEED_CHUNK:,})")
    rng = random.Random(have)
    generator = np.random.default_rng(have)
    now = dt.datetime.now(dt.UTC)
    # Filler, not knowledge: marked as already checked so conflict detection's sweep skips it.
    extra = ["checked_at"] if has_field("checked_at") else []
    columns = ", ".join([*SEED_COLUMNS, *extra])
    started = time.perf_counter()
    done = 0
    connection.ensure_connection()
    raw = connection.connection
    while done < missing:
        size = min(SEED_CHUNK, missing - done)
        vectors = generator.standard_normal((size, DIMENSIONS), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        # Django keeps the connection in autocommit: each chunk is one transaction.
        with raw.cursor() as cursor, cursor.copy(f"COPY memories_memory ({columns}) FROM STDIN") as copy:
            for vector in vectors:
                recorded = now - dt.timedelta(seconds=rng.uniform(0, 180 * 86400))
                row = seed_row(rng, workspace_id=workspace.pk, vector=vector.tolist(), recorded=recorded)
                copy.write_row([*row, *(recorded for _ in extra)])
        done += size
        elapsed = time.perf_counter() - started
        rate = done / elapsed
        print(f"  seeded {done:,}/{missing:,}  {rate:,.0f} rows/s  eta {(missing - done) / rate:,.0f}s", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memories_memory")
    return have + missing


def has_field(name: str) -> bool:
    return any(f.name == name for f in Memory._meta.get_fields())


def mark_checked(workspace: Workspace) -> None:
    """Spare conflict detection the benchmark's commits: they are filler, not knowledge.

    Done while they are still pending: with no embedding yet, the update costs no HNSW insert.
    """
    if has_field("checked_at"):
        pending = Memory.objects.filter(workspace=workspace, status=Status.PENDING_EMBED, checked_at__isnull=True)
        pending.update(checked_at=dt.datetime.now(dt.UTC))


def hnsw_size_mb() -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_relation_size('memory_embedding_hnsw')")
        (size,) = cursor.fetchone() or (0,)
    return float(size) / 2**20


# --- 2. The web server ----------------------------------------------------------------------------------------


def ensure_broker_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [BROKER_DATABASE])
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE DATABASE "{BROKER_DATABASE}"')
    return broker_url_on_database(BROKER_DATABASE)


def run_agent(
    *, port: int, key: str, seed_value: int, warmup: int, commits: int, start: threading.Barrier, out: CommitResults
) -> None:
    rng = random.Random(seed_value)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def commit(record: bool) -> None:
        nonlocal conn
        body = json.dumps(fact_body(rng))
        started = time.perf_counter()
        try:
            conn.request("POST", "/api/v1/memories", body=body, headers=headers)
            response = conn.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            if record:
                out.fail(f"{type(exc).__name__}: {exc}")
            return
        client_ms = (time.perf_counter() - started) * 1000
        if not record:
            return
        if response.status != 201:
            out.fail(f"HTTP {response.status}: {payload[:200]!r}")
            return
        match = SERVER_TIMING.search(response.headers.get("Server-Timing", ""))
        out.add(client_ms, float(match.group(1)) if match else None)

    for _ in range(warmup):
        commit(record=False)
    start.wait()
    for _ in range(commits):
        commit(record=True)
    conn.close()


def run_commits(*, port: int, keys: list[str], commits: int, warmup: int) -> CommitResults:
    out = CommitResults()
    start = threading.Barrier(len(keys) + 1)
    shares = [commits // len(keys) + (1 if i < commits % len(keys) else 0) for i in range(len(keys))]
    threads = [
        threading.Thread(
            target=run_agent,
            kwargs={
                "port": port,
                "key": key,
                "seed_value": i,
                "warmup": warmup,
                "commits": share,
                "start": start,
                "out": out,
            },
        )
        for i, (key, share) in enumerate(zip(keys, shares, strict=True))
    ]
    for thread in threads:
        thread.start()
    start.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    out.wall_s = time.perf_counter() - started
    return out


def purge_queue(broker_url: str) -> int:
    with celery_app.connection_for_write(broker_url) as conn:
        purged: int = celery_app.control.purge(connection=conn) or 0
    return purged


# --- 4. Embedding ---------------------------------------------------------------------------------------------


def run_embedding(texts: int) -> EmbedResults:
    out = EmbedResults()
    started = time.perf_counter()
    embedder = get_embedder()
    rng = random.Random(12345)
    embedder.embed([fact_text(rng) for _ in range(64)])  # first run allocates onnxruntime's buffers
    out.model_load_s = time.perf_counter() - started

    started = time.perf_counter()
    while batch := memories_embed_pending(limit=settings.MEMORYHUB_EMBED_BATCH_SIZE):
        out.worker_texts += batch
    out.worker_s = time.perf_counter() - started

    sample = [fact_text(rng) for _ in range(texts)]
    started = time.perf_counter()
    embedder.embed(sample)
    out.raw_s = time.perf_counter() - started
    out.raw_texts = len(sample)
    return out


# --- Report ---------------------------------------------------------------------------------------------------


def report(
    *,
    args: argparse.Namespace,
    held: int,
    index_mb: float,
    commits: CommitResults,
    purged: int,
    embed: EmbedResults,
    load_before: str,
    load_after: str,
) -> None:
    ok = len(commits.client_ms)
    worker_rate = embed.worker_texts / embed.worker_s if embed.worker_s else 0.0
    raw_rate = embed.raw_texts / embed.raw_s if embed.raw_s else 0.0
    server_p50 = percentile(commits.server_ms, 50)
    server_p99 = percentile(commits.server_ms, 99)
    rows = [
        ("commits (201 / failed)", f"{ok:,} / {commits.failures:,}", "all 201"),
        ("commits/s", f"{ok / commits.wall_s:,.0f}" if commits.wall_s else "-", ""),
        ("server ms p50 / p95 / p99", pstats(commits.server_ms), ""),
        ("  server p50", f"{server_p50:.1f}", verdict(server_p50, TARGETS["server_p50"], below=True)),
        ("  server p99", f"{server_p99:.1f}", verdict(server_p99, TARGETS["server_p99"], below=True)),
        ("client ms p50 / p95 / p99", pstats(commits.client_ms), ""),
        ("embedding tasks queued (purged)", f"{purged:,}", ""),
        (
            "worker path texts/s",
            f"{worker_rate:,.0f}  ({embed.worker_texts:,} in {embed.worker_s:.1f}s)",
            verdict(worker_rate, TARGETS["embed_texts_per_s"], below=False),
        ),
        (
            "raw embedder texts/s",
            f"{raw_rate:,.0f}  ({embed.raw_texts:,} in {embed.raw_s:.1f}s)",
            verdict(raw_rate, TARGETS["embed_texts_per_s"], below=False),
        ),
        ("model load + first batch", f"{embed.model_load_s:.1f}s", ""),
    ]
    print()
    print(f"MemoryHub commit benchmark — {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {os.cpu_count()} CPUs ({cpu_model()}); load average (1/5/15 min) before {load_before}")
    print(f"         after {load_after}")
    print(
        f"setup: workspace {WORKSPACE_SLUG} with {held:,} memories (HNSW index {index_mb:,.0f} MB),"
        f" uvicorn 2 workers × 4 threads, {args.agents} agents, {args.commits:,} commits"
        f" after {args.warmup} warm-up each"
    )
    print()
    width = max(len(name) for name, _, _ in rows)
    value_width = max(len(value) for _, value, _ in rows)
    print(f"{'metric':<{width}}  {'value':<{value_width}}  target")
    print(f"{'-' * width}  {'-' * value_width}  ------")
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:<{value_width}}  {target}".rstrip())
    for sample in commits.failure_samples:
        print(f"failure: {sample}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000, help="seed the workspace up to this many")
    parser.add_argument("--agents", type=int, default=8, help="concurrent agents (threads, one connection each)")
    parser.add_argument("--commits", type=int, default=2000, help="measured commits, over all agents")
    parser.add_argument("--warmup", type=int, default=10, help="unmeasured commits per agent first")
    parser.add_argument("--embed-texts", type=int, default=2000, help="texts for the raw embedder run")
    args = parser.parse_args()

    migrate_database()
    workspace, _ = workspace_get_or_create(slug=WORKSPACE_SLUG, name="Commit benchmark")
    seed(workspace, args.memories)
    index_mb = hnsw_size_mb()
    broker_url = ensure_broker_database()
    # Tasks sent from this process (if the embedding path enqueues follow-ups) go there too.
    celery_app.conf.update(broker_url=broker_url)
    stale = purge_queue(broker_url)
    if stale:
        print(f"purged {stale:,} tasks an earlier interrupted run left in {BROKER_DATABASE}")

    keys: list[AgentKey] = []
    purged = 0
    load_before = load_average()
    print(f"load average before: {load_before}")
    try:
        secrets: list[str] = []
        for i in range(args.agents):
            row, secret = agent_key_create(workspace=workspace, name=f"bench-agent-{i + 1}")
            keys.append(row)
            secrets.append(secret)
        port = free_port()
        print(f"starting the web process on 127.0.0.1:{port}")
        with web_server(port, {"CELERY_BROKER_URL": broker_url}):
            print(f"{args.agents} agents committing {args.commits:,} facts")
            commits = run_commits(port=port, keys=secrets, commits=args.commits, warmup=args.warmup)
        load_after = load_average()
    finally:
        for key in keys:
            agent_key_revoke(key=key)
        # Nothing consumes this queue; the pending facts are embedded below instead.
        purged = purge_queue(broker_url)
        mark_checked(workspace)
    print(f"embedding the pending facts, then {args.embed_texts:,} texts with the raw embedder")
    embed = run_embedding(args.embed_texts)
    purged += purge_queue(broker_url)
    left = Memory.objects.filter(workspace=workspace, status=Status.PENDING_EMBED).count()
    if left:
        print(f"warning: {left:,} facts are still pending_embed")
    report(
        args=args,
        held=Memory.objects.filter(workspace=workspace).count(),
        index_mb=index_mb,
        commits=commits,
        purged=purged,
        embed=embed,
        load_before=load_before,
        load_after=load_after,
    )
    return 1 if commits.failures else 0


if __name__ == "__main__":
    sys.exit(main())
