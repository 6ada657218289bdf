"""What every benchmark script shares: percentiles, machine facts, the web server to measure against."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from memoryhub.webserver import web_command

ROOT = Path(__file__).resolve().parent.parent


def migrate_database() -> None:
    """The schema as ``make run`` leaves it: a fresh checkout's embedded database has none yet."""
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, round(q / 100 * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


def p50_p95(values: Sequence[float]) -> str:
    return f"{percentile(values, 50):6.1f} / {percentile(values, 95):6.1f}" if values else "-"


def verdict(value: float, target: float, *, below: bool) -> str:
    ok = value < target if below else value >= target
    return f"{'<' if below else '≥'} {target:g}  {'ok' if ok else 'MISSED'}"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def web_server(
    port: int, env: Mapping[str, str] | None = None, timeout: float = 60
) -> Iterator[subprocess.Popen[bytes]]:
    """The web process as `make run` starts it (uvicorn, 2 workers × 4 Django threads, MCP at /mcp/), answering."""
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--no-input", "-v0"], cwd=ROOT, check=True)
    command = web_command(host="127.0.0.1", port=port, workers=2, access_log=False)
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryhub.settings", **(env or {})}
    process = subprocess.Popen(command, cwd=ROOT, env=environment, start_new_session=True)  # noqa: S603
    try:
        _wait_until_up(port, process, timeout)
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_up(port: int, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the web server exited with {process.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/openapi.json")
            if conn.getresponse().status == 200:
                conn.close()
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the web server did not answer on port {port} within {timeout:.0f}s")
