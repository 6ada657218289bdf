from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from memoryhub.embedded_db import stop_server


class Command(BaseCommand):
    help = "Stop the embedded PostgreSQL server (it keeps running between `make run`s otherwise)."

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.DATABASE_URL:
            self.stdout.write("DATABASE_URL is set: there is no embedded server to stop")
            return
        stopped = stop_server(settings.PGDATA_DIR)
        self.stdout.write("stopped the embedded PostgreSQL" if stopped else "the embedded PostgreSQL was not running")
