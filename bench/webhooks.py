"""From a conflicting commit to a signed ``card.opened`` POST on a localhost receiver, through `make run`'s stack.

    .venv/bin/python bench/webhooks.py [--keep]

1. Starts ``manage.py run_hub`` as `make run` does (bench/burst.py's ``make_run_stack``), on a fresh
   embedded PostgreSQL in a temporary folder, with the default webhook settings (5 attempts, 2 s doubling).
2. Two receivers on localhost (http.server threads): one answers 204, one answers 500 twice and then 204.
   Both are registered for ``card.opened`` in a fresh workspace (``manage.py shell``, the service the
   Webhooks page calls).
3. For each pair of clashing facts: commit the first and wait until it is checked, then time from sending
   the second commit until each receiver holds a ``card.opened`` whose signature verifies with its secret.
4. Prints a table and the load average; the bar (issue 25): the signed event within 5 s of the
   conflicting commit, and the receiver that fails twice gets it on the third attempt.

docs/BENCHMARKS.md holds the results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import hmac
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.burst import Agent, Stack, create_key, make_run_stack, wait_for_fact  # noqa: E402
from bench.common import cpu_model, load_average  # noqa: E402

WORKSPACE = "webhook-bench"
# Clashing facts on one subject each (the same key), as an agent would commit them.
PAIRS = [
    ("diet", "The user is vegetarian.", "The user eats steak every day."),
    ("office_fridays", "The Lisbon office is closed on Fridays.", "The Lisbon office is open on Fridays."),
    ("staging_db", "The staging database runs PostgreSQL 16.", "The staging database runs MySQL 8."),
    ("deploy_day", "Production deploys happen only on Tuesdays.", "Production deploys happen only on Thursdays."),
    (
        "api_limit",
        "The payments API allows 1000 requests per second.",
        "The payments API allows 50 requests per second.",
    ),
]
REGISTER = """
import json
from workspaces.models import Workspace
from webhooks.services import webhook_create
workspace = Workspace.objects.get(slug={slug!r})
hooks = [webhook_create(workspace=workspace, url=url, events=["card.opened"]) for url in {urls!r}]
print(json.dumps([hook.secret for hook in hooks]))
"""


@dataclass
class Receiver:
    fail_first: int
    secret: str = ""
    url: str = ""
    posts: list[tuple[float, int, bytes, dict[str, str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with receiver.lock:
                    # Fail the first attempts of each delivery, not only of the first one.
                    delivery = headers.get("memoryhub-delivery", "")
                    tries = sum(1 for _, _, _, h in receiver.posts if h.get("memoryhub-delivery") == delivery)
                    status = 500 if tries < receiver.fail_first else 204
                    receiver.posts.append((time.monotonic(), status, body, headers))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{server.server_address[1]}/hook"

    def delivered(self, card_facts: set[str], timeout: float = 60) -> tuple[float, int, bool] | None:
        """When the card over these facts arrived with a 2xx answer: (time, attempts, signature verified)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                mine = [p for p in self.posts if _facts(p[2]) == card_facts]
            for at, status, body, headers in mine:
                if 200 <= status < 300:
                    return at, len(mine), _verified(self.secret, headers.get("memoryhub-signature", ""), body)
            time.sleep(0.02)
        return None


def _facts(body: bytes) -> set[str]:
    data = json.loads(body).get("data", {})
    return {fact["id"] for fact in data.get("card", {}).get("facts", [])}


def _verified(secret: str, header: str, body: bytes) -> bool:
    """docs/CONFIGURATION.md's snippet."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    timestamp = parts["t"]
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return abs(time.time() - int(timestamp)) <= 300 and hmac.compare_digest(expected, parts["v1"])


def register(stack: Stack, receivers: list[Receiver]) -> None:
    code = REGISTER.format(slug=WORKSPACE, urls=[r.url for r in receivers])
    result = subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=stack.env,
        check=True,
        capture_output=True,
        text=True,
    )
    secrets = json.loads(result.stdout.strip().splitlines()[-1])
    for receiver, secret in zip(receivers, secrets, strict=True):
        receiver.secret = secret


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary var dir (its database)")
    args = parser.parse_args()

    var_dir = Path(tempfile.mkdtemp(prefix="memoryhub-webhooks-"))
    print(f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC · {cpu_model()} · {os.cpu_count()} cores")
    print(f"load average before: {load_average()}")
    steady, flaky = Receiver(fail_first=0), Receiver(fail_first=2)
    rows: list[str] = []
    met = True
    try:
        with make_run_stack(var_dir) as stack:
            steady.start()
            flaky.start()
            agent = Agent(stack.port, create_key(stack, WORKSPACE))
            register(stack, [steady, flaky])
            for key, first, second in PAIRS:
                older = agent.call("POST", "/memories", {"text": first, "key": key})
                wait_for_fact(agent, older["id"], time.monotonic())
                sent = time.monotonic()
                newer = agent.call("POST", "/memories", {"text": second, "key": key})
                facts = {str(older["id"]), str(newer["id"])}
                got = steady.delivered(facts, timeout=30)
                if got is None:
                    rows.append(f"| {key} | no card within 30 s (detection decided otherwise) | | | |")
                    continue
                at, attempts, signed = got
                third = flaky.delivered(facts, timeout=60)
                flaky_cell = (
                    f"attempt {third[1]}, {third[0] - sent:.1f} s, signature {'ok' if third[2] else 'BAD'}"
                    if third
                    else "not delivered in 60 s"
                )
                met = met and at - sent < 5 and signed and third is not None and third[1] == 3 and third[2]
                rows.append(f"| {key} | {at - sent:.2f} s | {attempts} | {'ok' if signed else 'BAD'} | {flaky_cell} |")
            load_after = load_average()
    finally:
        if not args.keep:
            shutil.rmtree(var_dir, ignore_errors=True)

    print()
    print("| pair | commit → signed card.opened | attempts | signature | receiver failing twice |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    print(f"bar (< 5 s, signed; the failing receiver served on attempt 3): {'met' if met else 'NOT met'}")
    print(f"load average after: {load_after}")


if __name__ == "__main__":
    main()
