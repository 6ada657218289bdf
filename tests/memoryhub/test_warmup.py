from __future__ import annotations

from django.conf import settings

from memoryhub.warmup import WEB, WORKER, warm


def test_every_model_a_process_needs_is_registered_to_load_at_start() -> None:
    took = warm()

    assert set(took) == {"embedder", "subject reader", "detector", "slot reader", "lookup reader"}
    assert all(seconds >= 0 for seconds in took.values())


def test_each_process_loads_the_models_it_reads_with() -> None:
    # Recall's lookups (web) read with the lookup reader; the worker's checks never do.
    assert set(warm(WEB)) == {"embedder", "subject reader", "detector", "slot reader", "lookup reader"}
    assert set(warm(WORKER)) == {"embedder", "subject reader", "detector", "slot reader"}


def test_the_test_process_loads_no_models_in_a_background_thread() -> None:
    """Such a thread's numpy header parse raced pytest's assertion rewriting on CPython 3.11.7 (settings_test)."""
    assert settings.MEMORYHUB_WARM_MODELS is False
