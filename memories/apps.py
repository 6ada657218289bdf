from __future__ import annotations

from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"

    def ready(self) -> None:
        # Tasks are imported once the app registry is ready (they import models).
        from memories import hooks, tasks

        hooks.facts_waiting.subscribe(tasks.enqueue_embedding)
