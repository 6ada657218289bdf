from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import numpy as np
from django.core.management import call_command

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
    assert (cache / "embeddings-minilm.npz").exists()
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
