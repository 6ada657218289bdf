from __future__ import annotations

from django.apps import AppConfig


class ConflictsConfig(AppConfig):
    name = "conflicts"

    def ready(self) -> None:
        # What conflicts does when memories announces something (memories never imports conflicts).
        from conflicts import services, tasks
        from memories import hooks

        hooks.facts_embedded.subscribe(tasks.enqueue_detection)
        hooks.fact_reinforced.subscribe(services.uncertainties_resolve_on_reinforce)
