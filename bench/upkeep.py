"""Cycle time of each upkeep job at 10k, 100k (and 1M) facts (issue 24).

    .venv/bin/python bench/upkeep.py [--sizes 10000,100000] [--changed 200]

For each size, smallest first, the workspace ``bench-upkeep`` is topped up to that
many active facts by COPY: random unit vectors (no texts are embedded), recorded
over the last 80 days, each with the confidence and ``decay_due_at`` the decay
job would have left — the steady state of an hourly schedule. The HNSW index is
dropped while seeding and built again afterwards (COPY into a live HNSW graph
runs at ~400 rows/s). Then, with the clock one hour on, it times one cycle of:

- decay (hourly): the facts due within that hour;
- drift (every 15 min): its 10–20 fact sample, checked by the offline tiers;
- consolidation and confidence (nightly, incremental): ``--changed`` facts
  recorded since their last run, half of them near-copies of existing facts
  (same text, vector + noise) so merges happen;
- unverified (nightly): the anti-join over the workspace.

Bar (issue 24): at 100k decay and drift < 5 s, consolidation < 5 min; at 1M,
decay and drift within 1.5× of 100k. docs/BENCHMARKS.md holds the results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import sys
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.commit import SEED_COLUMNS, fact_text, seed_row  # noqa: E402
from bench.common import cpu_model, load_average, migrate_database  # noqa: E402
from conflicts.detection.classifier import classify  # noqa: E402
from conflicts.models import JobRun, JobState  # noqa: E402
from conflicts.upkeep import JOBS, formulas  # noqa: E402
from conflicts.upkeep.runs import job_execute  # noqa: E402
from memories.embeddings import DIMENSIONS  # noqa: E402
from memories.models import Memory  # noqa: E402
from workspaces.services import workspace_get_or_create  # noqa: E402

WORKSPACE_SLUG = "bench-upkeep"
CHUNK = 5_000
HNSW = (
    "CREATE INDEX IF NOT EXISTS memory_embedding_hnsw ON memories_memory "
    "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
)
EXTRA = ["evidence_confidence", "evidence_at", "decay_due_at", "checked_at"]


def seed(workspace_id: int, target: int, now: dt.datetime) -> float:
    """Top the workspace up to ``target`` facts; seconds it took (0 when nothing was missing)."""
    have = Memory.objects.filter(workspace_id=workspace_id).count()
    missing = target - have
    if missing <= 0:
        return 0.0
    started = time.perf_counter()
    rng = random.Random(have)
    vectors_rng = np.random.default_rng(have)
    columns = ", ".join([*SEED_COLUMNS, *EXTRA])
    confidence_at = SEED_COLUMNS.index("confidence")
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
    connection.ensure_connection()
    raw = connection.connection
    done = 0
    while done < missing:
        size = min(CHUNK, missing - done)
        vectors = vectors_rng.standard_normal((size, DIMENSIONS), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
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
                copy.write_row([*row, 0.9, recorded, formulas.next_due(fact, confidence, now), recorded])
        done += size
        print(f"  seeded {have + done:,}/{target:,}", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        print("  building the HNSW index …", flush=True)
        cursor.execute(HNSW)
        cursor.execute("VACUUM ANALYZE memories_memory")
    return time.perf_counter() - started


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


def cycle(job: str, workspace_id: int, now: dt.datetime) -> tuple[float, int, int]:
    started = time.perf_counter()
    run = job_execute(job=job, fn=JOBS[job], workspace_id=workspace_id, now=now)
    seconds = time.perf_counter() - started
    assert run is not None
    return seconds, run.read, run.changed


def mark_previous_runs(workspace_id: int, at: dt.datetime) -> None:
    """The nightly jobs ran just before the changes: they read only what changed since."""
    for job in ("consolidation", "confidence"):
        JobRun.objects.create(
            job=job, workspace_id=workspace_id, state=JobState.DONE, started_at=at, finished_at=at, trigger="bench"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--changed", type=int, default=200)
    parser.add_argument("--only", default="", help="comma list of jobs to time (default: all)")
    parser.add_argument(
        "--ahead-hours", type=float, default=1.0, help="decay's clock this far on (re-runs: 2, 3 … to find due facts)"
    )
    args = parser.parse_args()
    migrate_database()
    workspace, _ = workspace_get_or_create(slug=WORKSPACE_SLUG, name="Upkeep benchmark")
    classify("The API allows 1,000 req/s.", "The API allows 1,000 requests a second.")  # models loaded once
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; load average {load_average()}")
    jobs = ("decay", "drift", "consolidation", "confidence", "unverified")
    results: dict[int, dict[str, tuple[float, int, int]]] = {}
    loads: dict[int, str] = {}
    for size in (int(s) for s in args.sizes.split(",")):
        seeded = seed(workspace.pk, size, timezone.now())
        print(f"{size:,} facts (seeding {seeded:.0f} s); load average {load_average()}", flush=True)
        wanted = args.only.split(",") if args.only else list(jobs)
        row = dict.fromkeys(jobs, (0.0, 0, 0))
        if "decay" in wanted:
            row["decay"] = cycle("decay", workspace.pk, timezone.now() + dt.timedelta(hours=args.ahead_hours))
        if "drift" in wanted:
            row["drift"] = cycle("drift", workspace.pk, timezone.now())
        if {"consolidation", "confidence"} & set(wanted):
            mark_previous_runs(workspace.pk, timezone.now())
            add_changed(workspace.pk, args.changed, timezone.now())
        for job in ("consolidation", "confidence", "unverified"):
            if job in wanted:
                row[job] = cycle(job, workspace.pk, timezone.now())
        results[size], loads[size] = row, load_average()
        for job in jobs:
            seconds, read, changed = row[job]
            print(f"  {job:14s} {seconds:8.2f} s  read {read:>7,}  changed {changed:>6,}")
        print(f"  load average {loads[size]}", flush=True)
    print("\n| facts | " + " | ".join(jobs) + " | load average |")
    print("|---|" + "---|" * (len(jobs) + 1))
    for size, row in results.items():
        cells = [f"{row[j][0]:.2f} s ({row[j][1]:,} read, {row[j][2]:,} changed)" for j in jobs]
        print(f"| {size:,} | " + " | ".join(cells) + f" | {loads[size]} |")
    if 100_000 in results:
        hundred = results[100_000]
        print(
            f"\nbar at 100k: decay {hundred['decay'][0]:.2f} s < 5 s, drift {hundred['drift'][0]:.2f} s < 5 s, "
            f"consolidation {hundred['consolidation'][0]:.1f} s < 300 s"
        )
        if 1_000_000 in results:
            for job in ("decay", "drift"):
                ratio = results[1_000_000][job][0] / max(hundred[job][0], 1e-9)
                print(f"1M / 100k {job}: {ratio:.2f}× (bar 1.5×)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
