"""``manage.py eval_stories`` on a two-story fixture, through real ingestion, detective and recall."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from conflicts.detection.verdict import CORRECTION, LEFT_BEHIND, Relation, Verdict
from conflicts.services import conflict_resolve
from memories.audit import Actor
from tests.memories.recall_helpers import day, remember
from training.stories import automatic_decisions, judge_decision
from workspaces.models import Workspace

FIXTURES = Path(__file__).parent / "fixtures"
SMALL = FIXTURES / "stories-small.jsonl"
# The detective's rule that finds the fixture's reversal (conflicts/detection/detective_offline.py, ``detect``).
RULE = "return"

pytestmark = pytest.mark.django_db(transaction=True)


def run(*args: str) -> str:
    out = StringIO()
    call_command("eval_stories", *args, stdout=out)
    return out.getvalue()


def test_it_prints_the_readme_json_shape_and_scores_the_fixture() -> None:
    report = json.loads(run(str(SMALL), "--json"))

    assert set(report) == {
        "mode",
        "stories",
        "flags",
        "false_flags_on_traps",
        "traps",
        "current_truth_accuracy",
        "automatic",
        "by_rule",
        "per_story",
    }
    assert set(report["flags"]) == {"precision", "recall", "f1", "expected", "raised", "matched"}
    assert (report["mode"], report["stories"], report["traps"]) == ("offline", 2, 2)
    # The reversal (off RabbitMQ … RabbitMQ again) is found, the traps are left alone, the
    # correction replaces the value it corrects, and the reversal's subject is disputed.
    assert report["flags"]["matched"] == report["flags"]["expected"] == 1
    assert report["flags"]["precision"] == 1.0
    assert report["false_flags_on_traps"] == 0
    assert report["current_truth_accuracy"] == 1.0
    # The move off RabbitMQ (s1) and the explicit correction (s2) are the automatic decisions;
    # neither retires a current fact, and the fixture labels no subject membership.
    assert report["automatic"] == {
        "supersedes": 2,
        "merges": 0,
        "wrong_supersedes": 0,
        "wrong_merges": 0,
        "retired_current": 0,
        "across_subjects": 0,
        "unlabelled": 2,
        "settled_dispute": 0,
        "stories_with_wrong": 0,
        "made_by_path": {CORRECTION: 1, LEFT_BEHIND: 1},  # the explicit correction; the broker left behind
        "wrong_by_path": {},
    }
    assert report["per_story"]["s1"] == {
        "supersedes": 1,
        "merges": 0,
        "wrong": 0,
        "decisions": ["f1 superseded by f2: ok (not labelled)"],
    }
    assert report["per_story"]["s2"]["decisions"] == ["f1 superseded by f2: ok (not labelled)"]


def test_it_counts_flags_per_rule_and_on_traps(tmp_path: Path) -> None:
    stories = [json.loads(line) for line in SMALL.read_text().splitlines()]
    # Mark the reversal's first and last facts a trap as well: the same flag is then right and on a trap.
    stories[0]["must_not_flag"].append({"fact_ids": ["f1", "f4"], "why": "for the test"})
    path = tmp_path / "stories.jsonl"
    path.write_text("\n".join(json.dumps(story) for story in stories) + "\n")

    report = json.loads(run(str(path), "--json"))
    text = run(str(path), "--by-rule")

    assert report["by_rule"] == {RULE: {"raised": 1, "right": 1, "on_traps": 1}}
    assert f"rule       {RULE}: 1 of 1 right, 1 on traps" in text
    # Story by story, each raised flag names its rule and how the story judges it.
    verbose = run(str(path), "--verbose")
    assert f"-- s1: raised [('reversal', ['f1', 'f2', 'f4'], '{RULE}', 'right, on a trap')]" in verbose


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


def _relabelled(tmp_path: Path, current: list[dict[str, object]]) -> Path:
    s2 = json.loads(SMALL.read_text().splitlines()[1])
    s2["current"] = current
    path = tmp_path / "s2.jsonl"
    path.write_text(json.dumps(s2) + "\n")
    return path


def test_a_supersede_that_retires_a_current_fact_is_counted_wrong(tmp_path: Path) -> None:
    # Labelled as if the first run were the current truth of its own subject: the correction
    # retiring it is then a wrong automatic decision, and both halves of "wrong" say why.
    path = _relabelled(
        tmp_path,
        [
            {"subject": "First BM25 run", "fact_id": "f1", "status": "clear", "about": ["f1"]},
            {"subject": "Corrected BM25 run", "fact_id": "f2", "status": "clear", "about": ["f2"]},
        ],
    )
    report = json.loads(run(str(path), "--json"))

    assert report["automatic"]["supersedes"] == 1
    assert report["automatic"]["wrong_supersedes"] == 1
    assert report["automatic"]["retired_current"] == 1
    assert report["automatic"]["across_subjects"] == 1
    assert report["automatic"]["stories_with_wrong"] == 1
    assert report["per_story"]["s2"]["decisions"] == [
        "f1 superseded by f2: WRONG: retired a current fact, across subjects"
    ]

    # Which reading made it, as a count a frozen set may be read for: the correction rule.
    assert report["automatic"]["wrong_by_path"] == {CORRECTION: 1}
    assert report["automatic"]["made_by_path"] == {CORRECTION: 1}

    text = run(str(path), "--verbose")
    assert "automatic  1 supersedes (1 wrong), 0 merges (0 wrong): 1 retired a current fact, 1 across subjects" in text
    assert f"made by    {CORRECTION} 1" in text
    assert f"wrong by   {CORRECTION} 1" in text
    assert "   automatic: f1 superseded by f2: WRONG: retired a current fact, across subjects" in text


def test_a_supersede_within_one_labelled_subject_is_right(tmp_path: Path) -> None:
    path = _relabelled(
        tmp_path, [{"subject": "BM25 baseline nDCG@10", "fact_id": "f2", "status": "clear", "about": ["f1", "f2"]}]
    )
    report = json.loads(run(str(path), "--json"))

    assert report["per_story"]["s2"]["decisions"] == ["f1 superseded by f2: ok"]
    assert report["automatic"]["wrong_supersedes"] == report["automatic"]["unlabelled"] == 0


def test_merges_and_supersedes_are_read_from_the_facts(workspace: Workspace) -> None:
    # The offline classifier rarely merges; a scripted verdict makes one through the real resolution.
    first = remember(workspace, "Support hours are 9 to 5", valid_from=day(1))
    again = remember(workspace, "Support is open from 9 to 5", valid_from=day(2))
    old = remember(workspace, "Deploys run on Jenkins", valid_from=day(1), key="ci_system")
    new = remember(workspace, "Deploys moved to GitHub Actions", valid_from=day(3), key="ci_system")
    for older, newer, relation in ((first, again, Relation.DUPLICATE), (old, new, Relation.TEMPORAL_CHANGE)):
        verdict = Verdict(relation=relation, probability=0.99, tier="test", reasons=("scripted",), current="b")
        conflict_resolve(older=older, newer=newer, verdict=verdict, context="ingestion", actor=Actor.system("t"))

    assert sorted(automatic_decisions(workspace)) == sorted(
        [("merge", again.pk, first.pk), ("supersede", old.pk, new.pk)]
    )


def test_a_merge_is_judged_by_subject() -> None:
    story = {
        "current": [
            {"subject": "Support hours", "fact_id": "f2", "status": "clear", "about": ["f1", "f2"]},
            {"subject": "Weekend support", "fact_id": "f3", "status": "clear"},
        ]
    }
    assert judge_decision("merge", "f2", "f1", story).describe() == "f2 merged into f1: WRONG: retired a current fact"
    assert judge_decision("merge", "f1", "f2", story).describe() == "f1 merged into f2: ok"
    assert judge_decision("merge", "f3", "f1", story).describe() == (
        "f3 merged into f1: WRONG: retired a current fact, across subjects"
    )
    assert judge_decision("merge", "f4", "f1", story).describe() == "f4 merged into f1: ok (not labelled)"


def test_settling_an_expected_dispute_silently_is_reported_apart() -> None:
    story = {
        "current": [{"subject": "Backup retention", "fact_id": "f2", "status": "unclear", "about": ["f1", "f2"]}],
        "expected_flags": [{"kind": "ambiguity", "fact_ids": ["f1", "f2"], "note": "30 vs 14 days"}],
    }
    decision = judge_decision("supersede", "f1", "f2", story)
    assert decision.settled_dispute
    assert not decision.wrong
    assert decision.describe() == "f1 superseded by f2: ok; settled a dispute the story wants asked"
    # A reversal's explicit switch may rightly replace what it switched from.
    story["expected_flags"][0]["kind"] = "reversal"
    assert not judge_decision("supersede", "f1", "f2", story).settled_dispute
