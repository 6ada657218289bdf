from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflicts.detection.verdict import Relation, Verdict
from conflicts.models import ConflictCard, DetectiveRun
from memories.models import Memory
from memoryhub.demo import DEMO_DATA, demo_seed
from tests.conflicts.scripted import ScriptedClassifier
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

ROWS = [
    {"days_ago": 20, "agent": "maya-assistant", "kind": "trait", "key": "diet", "text": "Maya is vegetarian."},
    {"days_ago": 18, "agent": "planner", "kind": "fact", "text": "Standup is at 9:30."},
    {"days_ago": 5, "agent": "maya-assistant", "kind": "trait", "key": "diet", "text": "Maya eats fish now."},
]


def test_the_shipped_history_is_a_few_weeks_of_a_team() -> None:
    rows = [json.loads(line) for line in DEMO_DATA.read_text().splitlines()]
    assert len(rows) >= 200
    assert len({r["agent"] for r in rows}) >= 5
    assert max(r["days_ago"] for r in rows) - min(r["days_ago"] for r in rows) >= 35
    assert sum(1 for r in rows if r.get("key")) >= 30  # slots that change over time: the demo's conflicts


def test_seeding_commits_embeds_and_detects_in_time_order(workspace: Workspace, tmp_path: Path) -> None:
    data = tmp_path / "demo.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in ROWS))
    classify = ScriptedClassifier(
        {
            ("Maya is vegetarian.", "Maya eats fish now."): Verdict(
                relation=Relation.TEMPORAL_CHANGE, probability=0.8, tier="scripted", current="b"
            )
        }
    )

    report = demo_seed(workspace=workspace, path=data, classify=classify)

    assert (report.facts, report.cards, report.detection) == (3, 1, True)
    assert set(Memory.objects.values_list("status", flat=True)) == {"active"}
    assert Memory.objects.filter(checked_at__isnull=True).count() == 0
    assert ConflictCard.objects.get().question == 'Is it still true that "Maya is vegetarian"?'
    # The detective read the whole (small) history once, not a forgetting-curve sample.
    assert list(DetectiveRun.objects.values_list("trigger", "state", "facts_read")) == [("schedule", "done", 3)]


def test_seeding_survives_missing_detection(workspace: Workspace, tmp_path: Path) -> None:
    data = tmp_path / "demo.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in ROWS))

    def broken(pairs: object) -> list[Verdict]:
        raise FileNotFoundError("detector.json")

    report = demo_seed(workspace=workspace, path=data, classify=broken)  # type: ignore[arg-type]

    assert (report.facts, report.detection) == (3, False)
    assert Memory.objects.filter(status="active").count() == 3
