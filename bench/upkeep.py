"""Cycle time of each upkeep job at 10k, 100k and 1M facts (issue 24).

    .venv/bin/python bench/upkeep.py [--sizes 10000,100000,1000000] [--changed 200] [--only decay,drift]
    .venv/bin/python bench/upkeep.py --seed-only        # top up and build the index, no timing

Each size has its own workspace (``bench-upkeep-10k``, ``-100k``, ``-1m``) in the one
``memories_memory`` table, topped up to that many facts by COPY: random unit vectors
(no texts are embedded), recorded over the last 80 days, each with the confidence and
the decay due time (``DecaySchedule``) an hourly schedule would have left. The HNSW
index is dropped while seeding and built once afterwards over the whole table
(``maintenance_work_mem`` 4 GB, progress printed every 30 s). A seeded database is
kept: a re-run only tops up what is missing, so it starts timing at once.

For each size it times one cycle of:

- decay (hourly), the hour after its previous cycle (the first time: after now):
  (a) the scheduled cycle, which reads at most ``MEMORYHUB_DECAY_CYCLE_ROWS`` due
  facts, the most overdue first — the bar's figure; (b) the drain: that cycle and
  the continuations it hands over to, run one after another here as a worker would
  take them, until nothing is due for that hour — how many cycles, their total time
  and the time per due fact — with how many memory row updates were heap-only (HOT);
- drift (every 15 min): its 10–20 fact sample, checked by the offline tiers, after
  printing the plan of detection's neighbour query (it must use the HNSW index);
- consolidation and confidence (nightly, incremental): ``--changed`` facts
  recorded since their last run, half of them near-copies of existing facts
  (same text, vector + noise) so merges happen;
- unverified (nightly): the anti-join over the workspace.

Bar (issue 24): at 100k decay and drift < 5 s, consolidation < 5 min; at 1M,
decay and drift within 1.5× of 100k (decay: the scheduled cycle, (a)).
docs/BENCHMARKS.md holds the results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import re
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.commit import SEED_COLUMNS, fact_text, seed_row  # noqa: E402
from bench.common import cpu_model, load_average, migrate_database  # noqa: E402
from conflicts.detection.candidates import candidates_for  # noqa: E402
from conflicts.detection.classifier import classify  # noqa: E402
from conflicts.models import JobRun, JobState  # noqa: E402
from conflicts.upkeep import JOBS, formulas  # noqa: E402
from conflicts.upkeep.runs import job_execute  # noqa: E402
from memories.embeddings import DIMENSIONS  # noqa: E402
from memories.models import DecaySchedule, Memory  # noqa: E402
from workspaces.services import workspace_get_or_create  # noqa: E402

WORKSPACE_SLUG = "bench-upkeep"
CHUNK = 5_000
HNSW = (
    "CREATE INDEX IF NOT EXISTS memory_embedding_hnsw ON memories_memory "
    "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
)
# Subjects and speech acts as ingestion would leave a plain claim with no subject found.
EXTRA = [
    "evidence_confidence",
    "evidence_at",
    "checked_at",
    "speech_act",
    "subject_entity",
    "subject_attribute",
    "subject_source",
]


def top_up(workspace_id: int, target: int, now: dt.datetime) -> int:
    """COPY the facts ``workspace_id`` lacks to hold ``target`` (HNSW index dropped first); how many it added."""
    have = Memory.objects.filter(workspace_id=workspace_id).count()
    missing = target - have
    if missing <= 0:
        return 0
    rng = random.Random(have)
    vectors_rng = np.random.default_rng(have)
    columns = ", ".join([*SEED_COLUMNS, *EXTRA])
    confidence_at = SEED_COLUMNS.index("confidence")
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
    connection.ensure_connection()
    raw = connection.connection
    done = 0
    started = time.perf_counter()
    while done < missing:
        size = min(CHUNK, missing - done)
        vectors = vectors_rng.standard_normal((size, DIMENSIONS), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        schedule: list[tuple[uuid.UUID, dt.datetime]] = []
        with raw.cursor() as cursor, cursor.copy(f"COPY memories_memory ({columns}) FROM STDIN") as copy:
            for vector in vectors:
                # Within the last 80 days: older ones would have been flagged stale (90 days) on earlier nights.
                recorded = now - dt.timedelta(seconds=rng.uniform(0, 80 * 86_400))
                row = seed_row(rng, workspace_id=workspace_id, vector=vector.tolist(), recorded=recorded)
                # The state an hourly decay schedule leaves: confidence decayed, next due time solved.
                fact = Memory(confidence=0.9, evidence_confidence=0.9, evidence_at=recorded, reliability="reliable")
                fact.recorded_at = recorded
                confidence = round(formulas.confidence_now(fact, now), 6)
                row[confidence_at] = confidence
                copy.write_row([*row, 0.9, recorded, recorded, "claim", "", "", ""])
                schedule.append((row[0], formulas.next_due(fact, confidence, now)))  # type: ignore[arg-type]
        write_schedule(raw, workspace_id, schedule)
        done += size
        rate = done / max(time.perf_counter() - started, 1e-9)
        print(f"  seeded {have + done:,}/{target:,} ({rate:,.0f} rows/s)", flush=True)
    return missing


def build_hnsw() -> None:
    """The HNSW graph over the whole table, in memory (``maintenance_work_mem`` 4 GB), with progress lines."""
    stop = threading.Event()

    def report() -> None:
        from django.db import connection as own

        while not stop.wait(30):
            with own.cursor() as cursor:
                cursor.execute(
                    "SELECT phase, blocks_done, blocks_total, tuples_done, tuples_total"
                    " FROM pg_stat_progress_create_index"
                )
                for phase, blocks_done, blocks_total, tuples_done, tuples_total in cursor.fetchall():
                    print(
                        f"    HNSW build: {phase}: blocks {blocks_done:,}/{blocks_total:,}, "
                        f"tuples {tuples_done:,}/{tuples_total:,}; load average {load_average()}",
                        flush=True,
                    )
        own.close()

    reporter = threading.Thread(target=report, daemon=True)
    reporter.start()
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET maintenance_work_mem = '4GB'")
            cursor.execute("SET max_parallel_maintenance_workers = 1")
            print(f"  building the HNSW index … (load average {load_average()})", flush=True)
            cursor.execute(HNSW)
            print(f"  HNSW built in {time.perf_counter() - started:.0f} s; VACUUM ANALYZE …", flush=True)
            cursor.execute("VACUUM ANALYZE memories_memory")
    finally:
        stop.set()
        reporter.join()


def seed(sizes: list[int], now: dt.datetime) -> dict[int, int]:
    """Each size's workspace topped up, then one HNSW build if anything was added; workspace id per size."""
    ids: dict[int, int] = {}
    added = 0
    started = time.perf_counter()
    for size in sizes:
        workspace, _ = workspace_get_or_create(slug=slug_for(size), name=f"Upkeep benchmark, {size:,} facts")
        ids[size] = workspace.pk
        added += top_up(workspace.pk, size, now)
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('memory_embedding_hnsw') IS NOT NULL")
        indexed = cursor.fetchone()[0]
    if added or not indexed:
        build_hnsw()
    print(f"seeded {added:,} facts in {time.perf_counter() - started:.0f} s; load average {load_average()}")
    return ids


def slug_for(size: int) -> str:
    return f"{WORKSPACE_SLUG}-{size // 1000}k" if size < 1_000_000 else f"{WORKSPACE_SLUG}-{size // 1_000_000}m"


def add_changed(workspace_id: int, count: int, now: dt.datetime) -> None:
    """``count`` facts recorded now: half near-copies of existing facts (merge material), half new."""
    rng = random.Random(count)
    sources = list(
        Memory.objects.filter(workspace_id=workspace_id, status="active")
        .order_by("?")
        .values_list("text", "embedding", "kind")[: count // 2]
    )
    rows: list[tuple[str, str, np.ndarray]] = []
    for text, vector, kind in sources:
        noisy = np.asarray(vector, dtype=np.float32) + np.random.default_rng(len(rows)).normal(0, 0.01, DIMENSIONS)
        rows.append((text, kind, (noisy / np.linalg.norm(noisy)).astype(np.float32)))
    fresh = np.random.default_rng(7).standard_normal((count - len(rows), DIMENSIONS), dtype=np.float32)
    for vector in fresh:
        rows.append((fact_text(rng), "fact", vector / np.linalg.norm(vector)))
    Memory.objects.bulk_create(
        [
            Memory(
                id=uuid.uuid4(),
                workspace_id=workspace_id,
                kind=kind,
                text=text,
                agent="bench-agent",
                confidence=0.9,
                evidence_confidence=0.9,
                evidence_at=now,
                status="active",
                embedding=vector,
                embedding_model="bench-random",
                embedded_at=now,
                checked_at=now,
                recorded_at=now,
                valid_from=now,
            )
            for text, kind, vector in rows
        ],
        batch_size=500,
    )


def write_schedule(raw: object, workspace_id: int, schedule: list[tuple[uuid.UUID, dt.datetime]]) -> None:
    """The seeded facts' next decay due times (``DecaySchedule``), by COPY."""
    table = DecaySchedule._meta.db_table
    with raw.cursor() as cursor, cursor.copy(f"COPY {table} (memory_id, workspace_id, due_at) FROM STDIN") as copy:  # type: ignore[attr-defined]
        for memory_id, due_at in schedule:
            copy.write_row([memory_id, workspace_id, due_at])


def cycle(job: str, workspace_id: int, now: dt.datetime) -> tuple[float, int, int]:
    seconds, run = timed_run(job, workspace_id, now)
    return seconds, run.read, run.changed


def timed_run(job: str, workspace_id: int, now: dt.datetime, follows: int | None = None) -> tuple[float, JobRun]:
    started = time.perf_counter()
    run = job_execute(job=job, fn=JOBS[job], workspace_id=workspace_id, now=now, follows=follows)
    seconds = time.perf_counter() - started
    assert run is not None
    return seconds, run


@dataclass
class Drain:
    """Decay's scheduled cycle and the continuations it handed over to, until nothing was due."""

    first: tuple[float, int, int]  # the scheduled cycle: seconds, read, changed
    still_due: int  # after the scheduled cycle
    cycles: int
    seconds: float
    read: int
    changed: int


def decay_drain(workspace_id: int, now: dt.datetime) -> Drain:
    """The hour's decay as workers would run it: each continuation as soon as its predecessor is done.

    Every cycle reads the same clock (the hour's end), so the chain ends when nothing is due for
    that hour; in production each continuation reads its own start time.
    """
    seconds, run = timed_run("decay", workspace_id, now)
    drain = Drain((seconds, run.read, run.changed), run.details["still_due"], 1, seconds, run.read, run.changed)
    while run.details.get("continues"):
        seconds, run = timed_run("decay", workspace_id, now, follows=run.pk)
        drain.cycles += 1
        drain.seconds += seconds
        drain.read += run.read
        drain.changed += run.changed
    return drain


def memory_updates() -> tuple[int, int, int]:
    """Row updates on ``memories_memory`` so far: all, heap-only, moved to another page."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT n_tup_upd, n_tup_hot_upd, n_tup_newpage_upd FROM pg_stat_user_tables"
            " WHERE relid = 'memories_memory'::regclass"
        )
        row = cursor.fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def decay_clock(workspace_id: int, ahead: dt.timedelta) -> dt.datetime:
    """One hour past the previous decay cycle of this workspace (or now): a re-run reads the next hour's due facts."""
    last = (
        JobRun.objects.filter(job="decay", workspace_id=workspace_id, state=JobState.DONE)
        .order_by("-started_at")
        .values_list("started_at", flat=True)
        .first()
    )
    return max(timezone.now(), last or timezone.now()) + ahead


def mark_previous_runs(workspace_id: int, at: dt.datetime, jobs: tuple[str, ...]) -> None:
    """The jobs ran just before: the nightly ones read only what changed since, decay only new facts."""
    for job in jobs:
        JobRun.objects.create(
            job=job, workspace_id=workspace_id, state=JobState.DONE, started_at=at, finished_at=at, trigger="bench"
        )


def explain_candidates(workspace_id: int) -> str:
    """``EXPLAIN ANALYZE`` of detection's own neighbour query (as ``candidates_for`` sent it) for one fact."""
    fact = Memory.objects.filter(workspace_id=workspace_id, status="active").first()
    assert fact is not None
    with CaptureQueriesContext(connection) as captured:
        candidates_for(fact)
    sql = next(q["sql"] for q in captured.captured_queries if "<=>" in q["sql"])
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.ef_search = 64")
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(f"EXPLAIN (ANALYZE, TIMING OFF) {sql}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    return re.sub(r"'\[[^\]]*\]'::vector", "'[…]'::vector", plan)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--changed", type=int, default=200)
    parser.add_argument("--only", default="", help="comma list of jobs to time (default: all)")
    parser.add_argument("--seed-only", action="store_true", help="top the workspaces up and build the index; no timing")
    parser.add_argument("--ahead-hours", type=float, default=1.0, help="decay's clock this far past its previous cycle")
    args = parser.parse_args()
    migrate_database()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; load average {load_average()}", flush=True)
    ids = seed(sizes, timezone.now())
    if args.seed_only:
        return 0
    classify("The API allows 1,000 req/s.", "The API allows 1,000 requests a second.")  # models loaded once
    with connection.cursor() as cursor:
        # Statistics as autovacuum keeps them (a migration that just filled the side table leaves none).
        cursor.execute(f"ANALYZE {DecaySchedule._meta.db_table}")
        cursor.execute("SELECT count(*) FROM memories_memory")
        table_rows = cursor.fetchone()[0]
    print(f"memories_memory holds {table_rows:,} rows (all workspaces)", flush=True)
    jobs = ("decay", "drift", "consolidation", "confidence", "unverified")
    wanted = args.only.split(",") if args.only else list(jobs)
    results: dict[int, dict[str, tuple[float, int, int]]] = {}
    drains: dict[int, tuple[Drain, tuple[int, int, int]]] = {}
    loads: dict[int, str] = {}
    for size in sizes:
        workspace_id = ids[size]
        print(f"{size:,} facts ({slug_for(size)}); {utc_now()}; load average {load_average()}", flush=True)
        row = dict.fromkeys(jobs, (0.0, 0, 0))
        if "decay" in wanted:
            if not JobRun.objects.filter(job="decay", workspace_id=workspace_id, state=JobState.DONE).exists():
                mark_previous_runs(workspace_id, timezone.now(), ("decay",))  # the hourly schedule ran before
            before = memory_updates()
            drain = decay_drain(workspace_id, decay_clock(workspace_id, dt.timedelta(hours=args.ahead_hours)))
            row["decay"] = drain.first
            after = memory_updates()
            updated, hot, moved = (after[0] - before[0], after[1] - before[1], after[2] - before[2])
            drains[size] = (drain, (updated, hot, moved))
            print(
                f"  decay: scheduled cycle {drain.first[0]:.3f} s, read {drain.first[1]:,},"
                f" {drain.still_due:,} still due; drain {drain.cycles} cycles, {drain.seconds:.3f} s,"
                f" read {drain.read:,}, changed {drain.changed:,}"
            )
            print(f"  decay's memory row updates: {updated:,}, heap-only {hot:,}, moved to another page {moved:,}")
        if "drift" in wanted:
            print(
                "  detection's neighbour query plan:\n    " + explain_candidates(workspace_id).replace("\n", "\n    ")
            )
            row["drift"] = cycle("drift", workspace_id, timezone.now())
        if {"consolidation", "confidence"} & set(wanted):
            mark_previous_runs(workspace_id, timezone.now(), ("consolidation", "confidence"))
            add_changed(workspace_id, args.changed, timezone.now())
        for job in ("consolidation", "confidence", "unverified"):
            if job in wanted:
                row[job] = cycle(job, workspace_id, timezone.now())
        results[size], loads[size] = row, load_average()
        for job in jobs:
            seconds, read, changed = row[job]
            print(f"  {job:14s} {seconds:8.2f} s  read {read:>7,}  changed {changed:>6,}")
        print(f"  {utc_now()}; load average {loads[size]}", flush=True)
    print("\n| facts | " + " | ".join(jobs) + " | load average |")
    print("|---|" + "---|" * (len(jobs) + 1))
    for size, row in results.items():
        cells = [f"{row[j][0]:.2f} s ({row[j][1]:,} read, {row[j][2]:,} changed)" for j in jobs]
        print(f"| {size:,} | " + " | ".join(cells) + f" | {loads[size]} |")
    if drains:
        bound = settings.MEMORYHUB_DECAY_CYCLE_ROWS
        print(f"\ndecay, at most {bound:,} due facts a cycle (MEMORYHUB_DECAY_CYCLE_ROWS):")
        print(
            "| facts | scheduled cycle | still due after it | drain: cycles | drain: time | due facts | per due fact"
            " | heap-only |\n|---|---|---|---|---|---|---|---|"
        )
        for size, (drain, (updated, hot, _moved)) in drains.items():
            per_fact = 1000 * drain.seconds / max(drain.read, 1)
            print(
                f"| {size:,} | {drain.first[0]:.3f} s ({drain.first[1]:,} read) | {drain.still_due:,} | {drain.cycles}"
                f" | {drain.seconds:.3f} s | {drain.read:,} | {per_fact:.2f} ms | {hot:,} of {updated:,} |"
            )
    if 100_000 in results:
        hundred = results[100_000]
        print(
            f"\nbar at 100k: decay {hundred['decay'][0]:.2f} s < 5 s, drift {hundred['drift'][0]:.2f} s < 5 s, "
            f"consolidation {hundred['consolidation'][0]:.1f} s < 300 s"
        )
        if 1_000_000 in results:
            for job in ("decay", "drift"):
                ratio = results[1_000_000][job][0] / max(hundred[job][0], 1e-9)
                what = " (the scheduled cycle)" if job == "decay" else ""
                print(f"1M / 100k {job}{what}: {ratio:.2f}× (bar 1.5×)")
    return 0


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


if __name__ == "__main__":
    raise SystemExit(main())
