from __future__ import annotations

from django.apps import AppConfig


class ConflictsConfig(AppConfig):
    name = "conflicts"

    def ready(self) -> None:
        # What conflicts does when memories announces something (memories never imports conflicts).
        from conflicts import retirement, services, tasks
        from conflicts.detection.classifier import classify
        from conflicts.detection.cross_encoder import LOOKUP_READER_PATH, SLOT_READER_PATH, load_cross_encoder
        from conflicts.upkeep import unverified
        from memories import hooks
        from memoryhub.warmup import WEB, warm_on_start

        hooks.facts_embedded.subscribe(tasks.enqueue_detection)
        hooks.fact_reinforced.subscribe(services.uncertainties_resolve_on_reinforce)
        # Seed 000: an inferred or researched fact is unverified from the moment it is stored.
        hooks.facts_waiting.subscribe(unverified.unverified_on_commit)
        hooks.facts_embedded.subscribe(unverified.unverified_on_commit)
        hooks.fact_reinforced.subscribe(unverified.unverified_on_reinforce)
        # A card whose facts retire meanwhile updates itself, or closes when nothing is left to ask.
        hooks.facts_retired.subscribe(retirement.cards_follow_retired_facts)
        hooks.facts_restored.subscribe(retirement.cards_follow_restored_facts)
        # Both tiers and the cross-encoder they consult, read once (a near-duplicate pair is read again).
        warm_on_start(
            "detector", lambda: classify("The API allows 1,000 req/s.", "The API allows 1,000 requests a second.")
        )
        # Recall's subject lookups (web) read with both readers; only the worker's checks read dated pairs with
        # the slot reader (none on the request path), so the worker loads no lookup reader.
        warm_on_start("slot reader", lambda: load_cross_encoder(SLOT_READER_PATH))
        warm_on_start("lookup reader", lambda: load_cross_encoder(LOOKUP_READER_PATH), processes=(WEB,))
