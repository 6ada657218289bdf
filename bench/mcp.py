"""MCP tool calls against their REST equivalents, over HTTP on `make run`'s stack (issue 25's bar: within 100 ms).

    .venv/bin/python bench/mcp.py [--calls 60] [--keep]

1. Starts ``manage.py run_hub`` as `make run` does (``bench.burst.make_run_stack``:
   a fresh var dir with its own embedded PostgreSQL, the demo workspace, the web
   process with MCP at /mcp/, the Celery worker and beat) and takes the demo's
   agent key.
2. Opens one MCP session with the SDK's own client (streamable HTTP, the key as
   ``Authorization: Bearer``) and one keep-alive HTTP client for REST, on the same
   event loop and the same HTTP library (httpx2, the SDK's), and warms both.
3. For each operation — recall, remember (``on_conflict=ignore``), check_action,
   find_conflicts, context — makes ``--calls`` calls through each interface,
   alternating REST and MCP so both see the same load, and times each call as the
   agent sees it (send to parsed answer).
4. Prints p50 / p95 per interface, the difference of the p50s and the verdict
   against the bar, with the machine, the date and the load average.

docs/BENCHMARKS.md holds the results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2

# Run as a script, this file's folder comes first on the path, and this file is named like the SDK's package:
# the repository root takes the folder's place, so `mcp` is the SDK and `bench` this folder.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from bench.burst import make_run_stack  # noqa: E402
from bench.common import cpu_model, load_average, percentile, verdict  # noqa: E402

BAR_MS = 100.0
WARMUP_CALLS = 5


class Interfaces:
    """The same operations through REST and through MCP, each returning the parsed answer."""

    def __init__(self, rest: httpx2.AsyncClient, mcp: Client) -> None:
        self.rest = rest
        self.mcp = mcp

    async def rest_call(self, method: str, path: str, body: Any = None) -> Any:
        response = await self.rest.request(method, f"/api/v1{path}", json=body)
        if response.status_code >= 400:
            raise RuntimeError(f"REST {method} {path}: {response.status_code} {response.text[:300]}")
        return response.json()

    async def mcp_call(self, tool: str, arguments: dict[str, Any]) -> Any:
        result = await self.mcp.call_tool(tool, arguments)
        if result.is_error:
            raise RuntimeError(f"MCP {tool}: {result.content}")
        return result.structured_content


Operation = tuple[str, Callable[[Interfaces, int], Awaitable[Any]], Callable[[Interfaces, int], Awaitable[Any]]]


def operations(memory_ids: list[str]) -> list[Operation]:
    recall = {"query": "Which database does the team use?"}
    context = {"recent_messages": [{"role": "user", "content": "Remind me how we deploy the API"}]}
    check = {"memory_ids": memory_ids[:3]}

    def fact(i: int, via: str) -> dict[str, Any]:
        return {"text": f"Benchmark note {i} via {via}: the staging cluster was restarted at {i % 24:02d}:00"}

    return [
        (
            "recall",
            lambda io, i: io.rest_call("POST", "/recall", recall),
            lambda io, i: io.mcp_call("recall", recall),
        ),
        (
            "remember",
            lambda io, i: io.rest_call("POST", "/memories", fact(i, "REST")),
            lambda io, i: io.mcp_call("remember", fact(i, "MCP")),
        ),
        (
            "check_action",
            lambda io, i: io.rest_call("POST", "/check-action", check),
            lambda io, i: io.mcp_call("check_action", check),
        ),
        (
            "find_conflicts",
            lambda io, i: io.rest_call("GET", "/conflicts?state=open"),
            lambda io, i: io.mcp_call("find_conflicts", {"state": "open"}),
        ),
        (
            "context",
            lambda io, i: io.rest_call("POST", "/context", context),
            lambda io, i: io.mcp_call("context", context),
        ),
    ]


async def timed(call: Awaitable[Any]) -> float:
    started = time.perf_counter()
    await call
    return (time.perf_counter() - started) * 1000


async def wait_for_web(base_url: str, timeout: float = 300) -> None:
    """run_hub goes on after 90 s even if the web is still starting (a loaded machine): wait until it answers."""
    deadline = time.monotonic() + timeout
    async with httpx2.AsyncClient(timeout=5) as client:
        while True:
            try:
                if (await client.get(f"{base_url}/login/")).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the web process did not answer within {timeout:.0f} s")
            await anyio.sleep(0.5)


async def measure(base_url: str, key: str, calls: int) -> list[tuple[str, list[float], list[float]]]:
    await wait_for_web(base_url)
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(base_url=base_url, headers=headers, timeout=60) as rest,
        httpx2.AsyncClient(headers=headers, timeout=60) as mcp_http,
        Client(streamable_http_client(f"{base_url}/mcp/", http_client=mcp_http), cache=None) as mcp,
    ):
        io = Interfaces(rest, mcp)
        page = await io.rest_call("GET", "/memories?limit=3")
        memory_ids = [item["id"] for item in page["items"]]
        results = []
        for name, via_rest, via_mcp in operations(memory_ids):
            for i in range(WARMUP_CALLS):
                await via_rest(io, -i - 1)
                await via_mcp(io, -i - 1)
            rest_ms: list[float] = []
            mcp_ms: list[float] = []
            for i in range(calls):
                rest_ms.append(await timed(via_rest(io, i)))
                mcp_ms.append(await timed(via_mcp(io, i)))
            results.append((name, rest_ms, mcp_ms))
            print(f"  {name}: done", flush=True)
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=60, help="calls per operation and interface")
    parser.add_argument("--keep", action="store_true", help="keep the temporary var dir")
    args = parser.parse_args()

    # The bench's own calls would otherwise run into the key's per-minute rate.
    os.environ["MEMORYHUB_API_RATE_PER_MINUTE"] = "0"
    var_dir = Path(tempfile.mkdtemp(prefix="memoryhub-bench-mcp-"))
    load_before = load_average()
    try:
        with make_run_stack(var_dir) as stack:
            if not stack.demo_key:
                raise RuntimeError("run_hub printed no demo agent key")
            results = anyio.run(measure, f"http://127.0.0.1:{stack.port}", stack.demo_key, args.calls)
    finally:
        if not args.keep:
            shutil.rmtree(var_dir, ignore_errors=True)

    print()
    print(
        f"MCP tool calls vs REST, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, {cpu_model()}, {os.cpu_count()} cores"
    )
    print(f"stack: manage.py run_hub (make run), {args.calls} calls per operation and interface, alternating")
    print(f"load average before: {load_before}; after: {load_average()}")
    print()
    print(f"{'operation':<16}{'REST p50 / p95 ms':>20}{'MCP p50 / p95 ms':>20}{'MCP − REST p50':>17}  bar")
    worst = 0.0
    for name, rest_ms, mcp_ms in results:
        rest_p50, mcp_p50 = percentile(rest_ms, 50), percentile(mcp_ms, 50)
        gap = mcp_p50 - rest_p50
        worst = max(worst, gap)
        print(
            f"{name:<16}{rest_p50:>9.1f} / {percentile(rest_ms, 95):>7.1f}"
            f"{mcp_p50:>11.1f} / {percentile(mcp_ms, 95):>7.1f}{gap:>+15.1f}    {verdict(gap, BAR_MS, below=True)}"
        )
    print(f"\nlargest gap {worst:+.1f} ms: {verdict(worst, BAR_MS, below=True)}")


if __name__ == "__main__":
    main()
