from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

FIXTURES = Path(__file__).parent / "fixtures"


def run(*args: str) -> str:
    out = StringIO()
    call_command("eval_pairs", *args, stdout=out)
    return out.getvalue()


def test_it_prints_the_readme_json_shape() -> None:
    report = json.loads(run(str(FIXTURES / "pairs-small.jsonl"), "--json"))
    # The README's keys, and the rate with the embeddings given next to them.
    assert set(report) == {"overall", "by_source", "confusion", "pairs_per_second", "pairs_per_second_embeddings_given"}
    assert set(report["overall"]) == {"contradiction", "duplicate", "update"}
    for scores in report["overall"].values():
        assert set(scores) == {"precision", "recall", "f1", "n"}
    assert report["overall"]["contradiction"]["n"] == 3
    assert report["overall"]["update"]["n"] == 2
    # A label absent from a source is omitted there.
    assert set(report["by_source"]["news"]) == {"duplicate"}
    assert set(report["by_source"]["temporal"]) == {"update"}
    assert sum(sum(row.values()) for row in report["confusion"].values()) == 9
    assert report["pairs_per_second"] > 0
    # Without the embedding the same pairs go faster.
    assert report["pairs_per_second_embeddings_given"] > report["pairs_per_second"]


def test_it_prints_a_table() -> None:
    text = run(str(FIXTURES / "pairs-small.jsonl"))
    assert "9 pairs, offline detector" in text
    assert "overall" in text
    assert "sick-style" in text
    assert "confusion (gold → predicted)" in text


def test_the_baseline_never_finds_an_update() -> None:
    report = json.loads(run(str(FIXTURES / "pairs-small.jsonl"), "--json", "--baseline"))
    assert report["overall"]["update"]["recall"] == 0.0


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing.jsonl", "no such file"),
        ("pairs-bad-json.jsonl", "line 2: not valid JSON"),
        ("pairs-bad-label.jsonl", "line 2: unknown label 'neutral'"),
    ],
)
def test_a_bad_file_is_a_command_error_naming_the_line(name: str, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run(str(FIXTURES / name))


def test_the_network_can_be_scored_without_its_second_reading() -> None:
    text = run(str(FIXTURES / "pairs-small.jsonl"), "--no-cross-encoder")
    assert "9 pairs, offline detector, network alone" in text


def test_a_missing_cross_encoder_file_is_a_command_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        run(str(FIXTURES / "pairs-small.jsonl"), "--cross-encoder", str(tmp_path / "none.onnx"))
