"""A burst of commits through the path users run: `make run`'s stack, over HTTP, until every fact is checked.

    .venv/bin/python bench/burst.py [--sizes 1000 10000] [--clients 8] [--keep]

1. Starts ``manage.py run_hub`` exactly as `make run` does (migrate, the demo
   workspace, web process + Celery worker + beat) on a free port, with
   ``MEMORYHUB_VAR_DIR`` pointing at a fresh temporary folder: its own embedded
   PostgreSQL, broker database and demo, untouched by any other run.
2. As soon as run_hub prints its login, one agent commits a fact and the
   script times how long until it is active and until it is checked (the
   newcomer's first commit), then the same for one commit on the idle stack.
3. For each size, a fresh workspace: ``--clients`` threads (one agent key, one
   keep-alive connection each) commit that many distinct facts; then
   ``GET /api/v1/status`` is polled until every fact is active and every fact is
   checked. Reported: commits/s, seconds from the last commit to all active and
   to all checked, and the broker's rows (waiting by queue, delivered) before the
   burst and after the drain.
4. Stops the stack and its database and removes the folder (``--keep`` keeps it).

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
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import cpu_model, free_port, load_average, percentile  # noqa: E402

POLL_SECONDS = 0.2
SUBJECTS = [
    "payments-api", "search-indexer", "billing-worker", "auth-gateway", "media-cdn", "etl-nightly",
    "checkout-web", "ledger-db", "notif-service", "feature-flags", "audit-log", "geo-router",
]  # fmt: skip
TEMPLATES = [
    "{s} runs {n} replicas in {region}.",
    "The on-call owner of {s} is {person}.",
    "{s} pages after {n} errors a minute.",
    "{s} stores its backups for {n} days in {region}.",
    "{person} reviewed the {s} runbook on day {n}.",
    "{s} depends on {other} since release {n}.",
    "Customer ticket {n} was about {s} timeouts in {region}.",
    "{s} was load-tested at {n} requests per second.",
]
REGIONS = ["eu-west-1", "us-east-2", "ap-south-1", "eu-central-1", "sa-east-1"]
PEOPLE = ["Priya", "Marco", "Aiko", "Femi", "Lena", "Tomás", "Noor", "Sven"]


def distinct_facts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    facts: set[str] = set()
    while len(facts) < count:
        subject, other = rng.sample(SUBJECTS, 2)
        facts.add(
            rng.choice(TEMPLATES).format(
                s=subject, other=other, n=rng.randint(2, 99_999), region=rng.choice(REGIONS), person=rng.choice(PEOPLE)
            )
        )
    return sorted(facts, key=lambda _: rng.random())


@dataclass
class Stack:
    port: int
    env: dict[str, str]
    process: subprocess.Popen[str]
    login_at: float
    demo_key: str
    log: list[str]


@contextmanager
def make_run_stack(var_dir: Path) -> Iterator[Stack]:
    """`manage.py run_hub` as `make run` starts it, on a fresh var dir; yields once the login is printed."""
    port = free_port()
    env = {**os.environ, "MEMORYHUB_VAR_DIR": str(var_dir), "DJANGO_SETTINGS_MODULE": "memoryhub.settings"}
    env.pop("DATABASE_URL", None)
    env.pop("CELERY_BROKER_URL", None)
    command = [sys.executable, "manage.py", "run_hub", "--port", str(port)]
    started = time.monotonic()
    process = subprocess.Popen(  # noqa: S603
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    log: list[str] = []
    demo_key = ""
    assert process.stdout is not None
    try:
        for line in process.stdout:
            log.append(line.rstrip())
            if match := re.search(r"agent key\s+(\S+)", line):
                demo_key = match.group(1)
            if "Ctrl-C stops" in line:
                break
        else:
            raise RuntimeError("run_hub exited before it was up:\n" + "\n".join(log[-30:]))
        login_at = time.monotonic()
        print(f"stack up {login_at - started:.1f}s after start (port {port}, {var_dir})")
        # Keep draining its output so the pipe never fills.
        threading.Thread(target=_drain_output, args=(process, log), daemon=True).start()
        yield Stack(port, env, process, login_at, demo_key, log)
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        subprocess.run([sys.executable, "manage.py", "stop_db"], cwd=ROOT, env=env, check=False, capture_output=True)


def _drain_output(process: subprocess.Popen[str], log: list[str]) -> None:
    for line in process.stdout or []:
        log.append(line.rstrip())


class Agent:
    def __init__(self, port: int, key: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: object = None) -> dict[str, object]:
        payload = json.dumps(body) if body is not None else None
        try:
            self.connection.request(method, f"/api/v1{path}", body=payload, headers=self.headers)
            response = self.connection.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # The server may close an idle keep-alive connection; open another.
            self.connection.close()
            self.connection.request(method, f"/api/v1{path}", body=payload, headers=self.headers)
            response = self.connection.getresponse()
        data = response.read()
        if response.status >= 400:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
        result: dict[str, object] = json.loads(data)
        return result


def create_key(stack: Stack, workspace: str) -> str:
    result = subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", "create_agent_key", workspace, "burst-bench"],
        cwd=ROOT,
        env=stack.env,
        check=True,
        capture_output=True,
        text=True,
    )
    return result.stdout.strip().splitlines()[-1].strip()


def wait_for_fact(agent: Agent, memory_id: object, since: float, timeout: float = 120) -> tuple[float, float]:
    """Seconds from ``since`` until the fact is active, and until it is checked."""
    active = checked = float("nan")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fact = agent.call("GET", f"/memories/{memory_id}")
        now = time.monotonic() - since
        if fact["status"] == "active" and active != active:
            active = now
        if fact.get("checked_at") and checked != checked:
            checked = now
            break
        time.sleep(0.05)
    return active, checked


def busy_fraction(seconds: float) -> float:
    """Share of the machine's CPU time spent busy over ``seconds`` (from /proc/stat; all cores)."""

    def sample() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = fields[3] + fields[4]
        return sum(fields) - idle, sum(fields)

    busy0, total0 = sample()
    time.sleep(seconds)
    busy1, total1 = sample()
    return (busy1 - busy0) / max(1, total1 - total0)


def broker_rows(agent: Agent) -> str:
    broker = agent.call("GET", "/status")["broker"]
    if not isinstance(broker, dict):
        return "not the SQL broker"
    waiting = broker["waiting"]
    assert isinstance(waiting, dict)
    return f"waiting {sum(waiting.values())} {dict(sorted(waiting.items()))}, delivered {broker['delivered']}"


@dataclass
class BurstResult:
    size: int
    commit_seconds: float
    commit_p95_ms: float
    to_active: float
    to_checked: float
    broker_before: str
    broker_after: str


def burst(stack: Stack, size: int, clients: int, seed: int) -> BurstResult:
    workspace = f"burst-{size}-{seed}"
    keys = [create_key(stack, workspace) for _ in range(clients)]
    facts = distinct_facts(size, seed)
    status_agent = Agent(stack.port, keys[0])
    before = broker_rows(status_agent)
    latencies: list[float] = []
    lock = threading.Lock()

    def client(index: int) -> None:
        agent = Agent(stack.port, keys[index])
        mine = []
        for text in facts[index::clients]:
            started = time.monotonic()
            agent.call("POST", "/memories", {"text": text, "scope": "ops", "agent": f"bench-{index}"})
            mine.append((time.monotonic() - started) * 1000)
        with lock:
            latencies.extend(mine)

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    last_commit = time.monotonic()
    commit_seconds = last_commit - started
    print(f"  {size:,} commits in {commit_seconds:.1f}s ({size / commit_seconds:,.0f}/s); draining …")
    to_active = to_checked = float("nan")
    shown = last_commit
    while True:
        status = status_agent.call("GET", "/status")
        embedding, checking = status["embedding"], status["checking"]
        assert isinstance(embedding, dict)
        assert isinstance(checking, dict)
        now = time.monotonic()
        if embedding["waiting"] == 0 and to_active != to_active:
            to_active = now - last_commit
        if embedding["waiting"] == 0 and checking["waiting"] == 0:
            to_checked = now - last_commit
            break
        if now - shown > 10:
            shown = now
            waiting = f"embed {embedding['waiting']:,}, check {checking['waiting']:,}"
            print(f"    +{now - last_commit:5.0f}s  waiting: {waiting}")
        if now - last_commit > 3600:
            break
        time.sleep(POLL_SECONDS)
    time.sleep(2)  # the drain that emptied its queue prunes the broker as it finishes
    after = broker_rows(status_agent)
    return BurstResult(size, commit_seconds, percentile(latencies, 95), to_active, to_checked, before, after)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--keep", action="store_true", help="keep the temporary var dir (its database)")
    args = parser.parse_args()

    var_dir = Path(tempfile.mkdtemp(prefix="memoryhub-burst-"))
    print(f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC · {cpu_model()} · {os.cpu_count()} cores")
    try:
        with make_run_stack(var_dir) as stack:
            newcomer = Agent(stack.port, stack.demo_key)
            created = newcomer.call("POST", "/memories", {"text": "We deploy the public API from the main branch."})
            first_active, first_checked = wait_for_fact(newcomer, created["id"], stack.login_at)
            print(f"first commit after the login is printed: active {first_active:.2f}s, checked {first_checked:.2f}s")
            idle = []
            for n in range(5):
                time.sleep(1.5)
                sent = time.monotonic()
                created = newcomer.call(
                    "POST", "/memories", {"text": f"Idle probe {n}: the staging cluster has {n + 3} nodes."}
                )
                idle.append(wait_for_fact(newcomer, created["id"], sent))
            print(
                "one commit on an idle stack (5 tries): active "
                + ", ".join(f"{a:.2f}" for a, _ in idle)
                + " s; checked "
                + ", ".join(f"{c:.2f}" for _, c in idle)
                + " s"
            )
            idle_busy = busy_fraction(20)
            print(f"machine CPU busy while the stack idles (20 s, worker polling every 50 ms): {idle_busy:.1%}")
            results = [burst(stack, size, args.clients, args.seed + size) for size in args.sizes]
            print(f"load average after: {load_average()}")
    finally:
        if not args.keep:
            shutil.rmtree(var_dir, ignore_errors=True)

    print()
    print("| facts | clients | commits/s | commit p95 ms | last commit → active | → checked | broker before | after |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r.size:,} | {args.clients} | {r.size / r.commit_seconds:,.0f} | {r.commit_p95_ms:.0f} | "
            f"{r.to_active:.1f} s | {r.to_checked:.1f} s | {r.broker_before} | {r.broker_after} |"
        )


if __name__ == "__main__":
    main()
