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


def test_slot_pairs_are_learnt_when_asked_for(tmp_path: Path) -> None:
    out = tmp_path / "detector.npz"
    call_command(
        "train_detector",
        *("--pairs", str(FIXTURES / "train-tiny.jsonl"), "--no-dialogues", "--no-domain"),
        *("--slots", str(Path(__file__).resolve().parents[2] / "training" / "data" / "slot-pairs-train.jsonl")),
        *("--out", str(out), "--cache", str(tmp_path / "cache"), "--hidden", "8", "--epochs", "1", "--no-cv"),
        stdout=StringIO(),
        stderr=StringIO(),
    )
    metadata = json.loads(out.with_suffix(".json").read_text())
    assert set(metadata["training_data"]["counts"]["slots"]) == {"update", "duplicate", "contradiction", "compatible"}
    assert metadata["training_data"]["files"] == ["train-tiny.jsonl", "slot-pairs-train.jsonl"]


def test_long_pairs_get_the_contradiction_offset_that_maximises_their_f1() -> None:
    from training.detector import CONTRADICTION, tune_long_bias

    # Four long pairs: the model leans to "compatible" on two real contradictions by a margin of 0.5.
    lean = np.log(np.array([[0.6, 0.4, 0.0001, 0.0001]] * 4, dtype=np.float32))
    log_probs = np.vstack([lean, np.log(np.array([[0.9, 0.1, 0.0001, 0.0001]] * 2, dtype=np.float32))])
    y = np.array([1, 1, 0, 0, 0, 0])
    long = np.array([True, True, False, False, False, False])
    offset = tune_long_bias(log_probs, y, np.zeros(4, dtype=np.float32), long)

    assert 0.4 < offset[CONTRADICTION] <= 1.0  # enough to call the two long contradictions, no more
    assert offset[[0, 2, 3]].tolist() == [0.0, 0.0, 0.0]
    assert not tune_long_bias(log_probs, y, np.zeros(4, dtype=np.float32), np.zeros(6, dtype=bool)).any()


def test_the_long_pair_offset_moves_only_long_pairs() -> None:
    from conflicts.detection.network import LONG_PAIR_WORDS, Model, long_pairs

    model = Model(
        mean=np.zeros(2, dtype=np.float32),
        scale=np.ones(2, dtype=np.float32),
        w1=np.zeros((2, 4), dtype=np.float32),
        b1=np.zeros(4, dtype=np.float32),
        w2=None,
        b2=None,
        long_bias=np.array([0.0, 2.0, 0.0, 0.0], dtype=np.float32),
    )
    claim, paragraph = "The sky is green.", " ".join(["word"] * (LONG_PAIR_WORDS + 1))
    long = long_pairs([claim, paragraph], [claim, claim])
    probs = model.probabilities(np.zeros((2, 2), dtype=np.float32), long)

    assert long.tolist() == [False, True]
    np.testing.assert_allclose(probs[0], [0.25, 0.25, 0.25, 0.25])
    assert probs[1].argmax() == 1
