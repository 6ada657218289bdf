"""10,000 facts through the Python client: batch commit (1,000 per request) against 8 parallel single commits.

    .venv/bin/python bench/client_batch.py [--facts 10000] [--batch-size 1000] [--clients 8] [--keep]

1. Starts ``manage.py run_hub`` as `make run` does (bench/burst.py's ``make_run_stack``: the web process,
   Celery worker and beat on a fresh embedded PostgreSQL in a temporary folder).
2. 8 threads, each with its own ``MemoryHub`` and agent key, commit the facts one request each
   (``remember``) into a fresh workspace; then the stack's embedding queue is let drain.
3. One ``MemoryHub`` commits the same facts with ``remember_batch`` (``--batch-size`` per request)
   into another fresh workspace. The singles run first, so the batch runs while the worker is still
   checking the singles' facts: any bias is against the batch.
4. Prints a table and the load average; the bar (issue 25): the batch < 30 s and faster than the singles.

docs/BENCHMARKS.md holds the results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memoryhub_client import MemoryHub, RetryPolicy  # noqa: E402

from bench.burst import Stack, create_key, distinct_facts, make_run_stack  # noqa: E402
from bench.common import cpu_model, load_average, percentile  # noqa: E402

RETRIES = RetryPolicy(max_attempts=5)


def singles(stack: Stack, facts: list[str], clients: int) -> tuple[float, list[float]]:
    """Seconds to commit every fact one request each from ``clients`` threads, and each request's ms."""
    url = f"http://127.0.0.1:{stack.port}"
    keys = [create_key(stack, "client-singles") for _ in range(clients)]
    latencies: list[float] = []
    lock = threading.Lock()
    failures: list[BaseException] = []

    def client(index: int) -> None:
        mine: list[float] = []
        try:
            with MemoryHub(url, keys[index], retry=RETRIES) as hub:
                for text in facts[index::clients]:
                    sent = time.monotonic()
                    hub.remember(text, scope="ops")
                    mine.append((time.monotonic() - sent) * 1000)
        except BaseException as exc:  # reported below; a thread's exception is otherwise lost
            failures.append(exc)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - started
    if failures:
        raise RuntimeError(f"{len(failures)} client threads failed: {failures[0]!r}")
    return seconds, latencies


def batched(stack: Stack, facts: list[str], batch_size: int) -> tuple[float, list[float], int]:
    """Seconds to commit every fact through ``remember_batch``, each request's ms, and how many were stored."""
    url = f"http://127.0.0.1:{stack.port}"
    key = create_key(stack, "client-batch")
    latencies: list[float] = []
    stored = 0
    with MemoryHub(url, key, retry=RETRIES) as hub:
        started = time.monotonic()
        for start in range(0, len(facts), batch_size):
            sent = time.monotonic()
            result = hub.remember_batch([{"text": t, "scope": "ops"} for t in facts[start : start + batch_size]])
            latencies.append((time.monotonic() - sent) * 1000)
            stored += result.stored
        seconds = time.monotonic() - started
    return seconds, latencies, stored


def wait_for_embedding(stack: Stack, key: str, timeout: float = 300) -> float:
    started = time.monotonic()
    with MemoryHub(f"http://127.0.0.1:{stack.port}", key) as hub:
        while hub.status().embedding.waiting and time.monotonic() - started < timeout:
            time.sleep(0.5)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--keep", action="store_true", help="keep the temporary var dir (its database)")
    args = parser.parse_args()

    facts = distinct_facts(args.facts, args.seed)
    var_dir = Path(tempfile.mkdtemp(prefix="memoryhub-client-batch-"))
    print(f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC · {cpu_model()} · {os.cpu_count()} cores")
    print(f"load average before: {load_average()}")
    try:
        with make_run_stack(var_dir) as stack:
            single_seconds, single_ms = singles(stack, facts, args.clients)
            print(f"  {args.facts:,} single commits from {args.clients} threads: {single_seconds:.1f}s")
            drained = wait_for_embedding(stack, stack.demo_key)
            print(f"  their embedding drained {drained:.1f}s later; checking goes on in the background")
            load_between = load_average()
            batch_seconds, batch_ms, stored = batched(stack, facts, args.batch_size)
            print(f"  {args.facts:,} facts in batches of {args.batch_size:,}: {batch_seconds:.1f}s ({stored:,} stored)")
            load_after = load_average()
    finally:
        if not args.keep:
            shutil.rmtree(var_dir, ignore_errors=True)

    print()
    print("| how | requests | seconds | facts/s | request p50 | request p95 |")
    print("|---|---|---|---|---|---|")
    print(
        f"| {args.clients} threads × `remember` | {len(single_ms):,} | {single_seconds:.1f} | "
        f"{args.facts / single_seconds:,.0f} | {percentile(single_ms, 50):.0f} ms | "
        f"{percentile(single_ms, 95):.0f} ms |"
    )
    print(
        f"| `remember_batch`, {args.batch_size:,} per request | {len(batch_ms)} | {batch_seconds:.1f} | "
        f"{args.facts / batch_seconds:,.0f} | {percentile(batch_ms, 50):.0f} ms | {percentile(batch_ms, 95):.0f} ms |"
    )
    print()
    bar = batch_seconds < 30 and batch_seconds < single_seconds
    print(f"bar (batch < 30 s and faster than the singles): {'met' if bar else 'NOT met'}")
    print(f"load average before the batch: {load_between}; after: {load_after}")


if __name__ == "__main__":
    main()
