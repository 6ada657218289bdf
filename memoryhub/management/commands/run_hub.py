"""`make run`: prepare the database and run web, worker and beat until Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import FrameType
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.demo import demo_setup
from memoryhub.webserver import web_command

# Web and worker (with its models loaded) are normally up in a few seconds.
STARTUP_TIMEOUT_SECONDS = 90


class Command(BaseCommand):
    help = "Migrate, create the demo workspace once, then run web + Celery worker + beat (Ctrl-C stops all)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--web-workers", type=int, default=2)

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        credentials = demo_setup()
        base_url = f"http://{options['host']}:{options['port']}"
        ready_file = settings.VAR_DIR / "worker-ready"
        ready_file.unlink(missing_ok=True)
        children = self._start(options, ready_file)
        self._wait_until_up(children, base_url, ready_file)
        self.stdout.write(self.style.SUCCESS(f"MemoryHub is up in {time.monotonic() - started:.1f}s"))
        self.stdout.write(f"  dashboard  {base_url}/   (admin at {base_url}/admin/)")
        self.stdout.write(f"  API docs   {base_url}/api/docs")
        self.stdout.write(f"  MCP        {base_url}/mcp/   (streamable HTTP, agent key as Bearer; docs/MCP.md)")
        if settings.DATABASE_URL:
            self.stdout.write("  database   DATABASE_URL")
        else:
            self.stdout.write(f"  database   embedded PostgreSQL in {settings.PGDATA_DIR}")
        if credentials:
            self.stdout.write(self.style.WARNING("  First start — these are shown once:"))
            self.stdout.write(f"    login      {credentials.username} / {credentials.password}")
            self.stdout.write(f"    agent key  {credentials.agent_key}  (workspace 'demo')")
            self.stdout.write(
                f"    demo       {credentials.facts} facts, {credentials.cards} cards: {base_url}/w/demo/inbox/"
            )
            self.stdout.write(
                f"    try: curl -X POST {base_url}/api/v1/memories -H 'Authorization: Bearer {credentials.agent_key}'"
                " -H 'Content-Type: application/json' -d '{\"text\": \"We use REST for the public API\"}'"
            )
        else:
            self.stdout.write("  login      admin (password printed at first start; `manage.py changepassword admin`)")
        self.stdout.write("Ctrl-C stops web, worker and beat.")
        self._supervise(children)

    def _wait_until_up(self, children: dict[str, subprocess.Popen[bytes]], base_url: str, ready_file: Path) -> None:
        """Until the web answers and the worker has loaded its models, so the first commit is served at once."""
        deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
        web_up = False
        while time.monotonic() < deadline:
            for name, child in children.items():
                if child.poll() is not None:
                    raise CommandError(f"{name} exited with {child.returncode} while starting")
            if not web_up:
                try:
                    with urllib.request.urlopen(f"{base_url}/login/", timeout=2):  # noqa: S310 - our own URL
                        web_up = True
                except OSError:
                    pass
            if web_up and ready_file.exists():
                return
            time.sleep(0.2)
        self.stderr.write(f"still starting after {STARTUP_TIMEOUT_SECONDS}s (web up: {web_up}); going on")

    def _start(self, options: dict[str, Any], ready_file: Path) -> dict[str, subprocess.Popen[bytes]]:
        python = sys.executable
        commands = {
            "web": web_command(host=options["host"], port=options["port"], workers=options["web_workers"]),
            "worker": [python, "-m", "celery", "-A", "memoryhub", "worker", "--loglevel", "INFO", "--concurrency", "1"],
            "beat": [python, "-m", "celery", "-A", "memoryhub", "beat", "--loglevel", "INFO"],
        }
        env = {**os.environ, "MEMORYHUB_WORKER_READY_FILE": str(ready_file)}
        # Each child gets its own process group so Ctrl-C reaches it once, through us.
        return {name: subprocess.Popen(cmd, start_new_session=True, env=env) for name, cmd in commands.items()}  # noqa: S603

    def _supervise(self, children: dict[str, subprocess.Popen[bytes]]) -> None:
        stopping = False

        def stop(signum: int, frame: FrameType | None) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        while not stopping:
            for name, child in children.items():
                if child.poll() is not None:
                    self.stderr.write(f"{name} exited with {child.returncode}; stopping the others")
                    stopping = True
            time.sleep(0.5)
        for child in children.values():
            if child.poll() is None:
                child.terminate()
        deadline = time.monotonic() + 15
        for child in children.values():
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
        self.stdout.write("stopped web, worker and beat (the embedded database keeps running: `make stop-db`)")
