"""``manage.py eval_stories`` on a two-story fixture, through real ingestion, detective and recall."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

FIXTURES = Path(__file__).parent / "fixtures"
SMALL = FIXTURES / "stories-small.jsonl"

pytestmark = pytest.mark.django_db(transaction=True)


def run(*args: str) -> str:
    out = StringIO()
    call_command("eval_stories", *args, stdout=out)
    return out.getvalue()


def test_it_prints_the_readme_json_shape_and_scores_the_fixture() -> None:
    report = json.loads(run(str(SMALL), "--json"))

    assert set(report) == {"mode", "stories", "flags", "false_flags_on_traps", "traps", "current_truth_accuracy"}
    assert set(report["flags"]) == {"precision", "recall", "f1", "expected", "raised", "matched"}
    assert (report["mode"], report["stories"], report["traps"]) == ("offline", 2, 2)
    # The reversal (off RabbitMQ … RabbitMQ again) is found, the traps are left alone, the
    # correction replaces the value it corrects, and the reversal's subject is disputed.
    assert report["flags"]["matched"] == report["flags"]["expected"] == 1
    assert report["flags"]["precision"] == 1.0
    assert report["false_flags_on_traps"] == 0
    assert report["current_truth_accuracy"] == 1.0


def test_it_explains_a_current_truth_miss(tmp_path: Path) -> None:
    stories = [json.loads(line) for line in SMALL.read_text().splitlines()]
    # Claim the corrected value is current: recall (rightly) answers with the correction.
    stories[1]["current"][0]["fact_id"] = "f1"
    wrong = tmp_path / "stories.jsonl"
    wrong.write_text("\n".join(json.dumps(story) for story in stories) + "\n")

    text = run(str(wrong), "--verbose")

    assert "current    0.50 accuracy (clear 0 of 1, unclear 1 of 1)" in text
    assert "miss: s2 'BM25 baseline nDCG@10': expected f1 (clear), got f2 (" in text
    assert "f1 not among the 2 hits (it is active, superseded)" in text


def test_it_refuses_a_missing_file() -> None:
    with pytest.raises(CommandError, match="no such file"):
        run("/nonexistent/stories.jsonl")
