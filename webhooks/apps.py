from __future__ import annotations

from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"

    def ready(self) -> None:
        # What webhooks does when conflicts announces something (conflicts never imports webhooks).
        from conflicts import hooks
        from webhooks import tasks

        hooks.card_opened.subscribe(tasks.on_card_opened)
        hooks.card_answered.subscribe(tasks.on_card_answered)
        hooks.decision_made.subscribe(tasks.on_decision_made)
        hooks.job_failed.subscribe(tasks.on_job_failed)
