from __future__ import annotations

from memoryhub.warmup import warm


def test_every_model_a_process_needs_is_registered_to_load_at_start() -> None:
    took = warm()

    assert set(took) == {"embedder", "detector"}
    assert all(seconds >= 0 for seconds in took.values())
