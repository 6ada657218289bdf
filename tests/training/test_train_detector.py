from __future__ import annotations

import json
from dataclasses import replace
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memories.embeddings import get_embedder
from training.detector import TrainConfig, fit

FIXTURES = Path(__file__).parent / "fixtures"


def train(out: Path, cache: Path) -> dict[str, object]:
    call_command(
        "train_detector",
        "--pairs",
        str(FIXTURES / "train-tiny.jsonl"),
        "--no-dialogues",
        "--no-domain",
        "--out",
        str(out),
        "--cache",
        str(cache),
        "--hidden",
        "8",
        "--epochs",
        "2",
        "--folds",
        "2",
        stdout=StringIO(),
        stderr=StringIO(),
    )
    metadata: dict[str, object] = json.loads(out.with_suffix(".json").read_text())
    return metadata


def test_it_reproduces_the_same_weights(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = train(tmp_path / "one" / "detector.npz", cache)
    second = train(tmp_path / "two" / "detector.npz", cache)
    # One cache per embedding model: another model's vectors would train for inputs never seen.
    assert [p.name for p in cache.iterdir()] == [f"embeddings-{get_embedder().name}.npz"]
    assert first["embedder"] == get_embedder().name
    with np.load(tmp_path / "one" / "detector.npz") as a, np.load(tmp_path / "two" / "detector.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for name in a.files:
            assert np.array_equal(a[name], b[name]), name
    assert first == second
    assert first["training_data"]["counts"]["domain"]  # type: ignore[index]
    assert "overall" in first["held_out"]  # type: ignore[operator]


def test_the_trained_weights_can_be_evaluated(tmp_path: Path) -> None:
    out = tmp_path / "detector.npz"
    train(out, tmp_path / "cache")
    report = StringIO()
    call_command("eval_pairs", str(FIXTURES / "pairs-small.jsonl"), "--json", "--weights", str(out), stdout=report)
    assert json.loads(report.getvalue())["overall"]["contradiction"]["n"] == 3


def test_an_ensemble_is_one_wider_network_giving_its_members_mean_logits() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((120, 10)).astype(np.float32)
    y = rng.integers(0, 4, size=120)
    weights = np.ones(120, dtype=np.float32)
    config = TrainConfig(hidden=6, epochs=3, batch_size=32, seed=11, ensemble=3)

    ensemble = fit(x, y, weights, config)
    members = [fit(x, y, weights, replace(config, seed=11 + m, ensemble=1)) for m in range(3)]

    assert ensemble.w1.shape == (10, 18)
    expected = np.mean([member.logits(x) for member in members], axis=0)
    np.testing.assert_allclose(ensemble.logits(x), expected, rtol=1e-5, atol=1e-5)
    assert not np.allclose(members[0].logits(x), members[1].logits(x))  # the seeds differ


def test_it_refuses_an_empty_ensemble(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="--ensemble must be at least 1"):
        call_command(
            "train_detector",
            *("--pairs", str(FIXTURES / "train-tiny.jsonl"), "--no-dialogues", "--no-domain"),
            *("--ensemble", "0", "--out", str(tmp_path / "d.npz")),
            stdout=StringIO(),
        )
    assert not (tmp_path / "d.npz").exists()
