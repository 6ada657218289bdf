from __future__ import annotations

from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"

    def ready(self) -> None:
        # Tasks are imported once the app registry is ready (they import models).
        from memories import hooks, tasks
        from memories.embeddings import get_embedder
        from memories.subjects import subject_of
        from memoryhub.warmup import warm_on_start

        hooks.facts_waiting.subscribe(tasks.enqueue_embedding)
        warm_on_start("embedder", lambda: get_embedder().embed(["warming up"]))
        # Reading a subject loads Brill's lexicon (sha256-checked) once.
        warm_on_start("subject reader", lambda: subject_of("The staging cluster runs Postgres 16."))
