from __future__ import annotations

from django.apps import AppConfig


class MemoryhubConfig(AppConfig):
    """The project package: project-wide management commands (run_hub, stop_db)."""

    name = "memoryhub"
