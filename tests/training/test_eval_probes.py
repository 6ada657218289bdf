"""``manage.py eval_probes`` on a two-pair fixture, through real ingestion and the detective."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from training import probes

SMALL = Path(__file__).parent / "fixtures" / "probes-small.jsonl"

pytestmark = pytest.mark.django_db(transaction=True)


def run(*args: str) -> str:
    out = StringIO()
    call_command("eval_probes", *args, stdout=out)
    return out.getvalue()


def test_it_reports_each_kind_and_each_pair() -> None:
    report = json.loads(run(str(SMALL), "--json"))

    assert report["pairs"] == 2
    # The explicit correction replaces what it corrects; the unrelated pair is left alone.
    assert report["same_subject_change"] == {
        "n": 1,
        "superseded": 1,
        "superseded_backwards": 0,
        "merged": 0,
        "carded": 0,
        "uncertain": 0,
        "nothing": 0,
        "caught": 1,
        "caught_share": 1.0,
        "retired_by": {"correction": 1},  # the reading that made the supersede
    }
    assert report["different_subject"]["wrongly_retired"] == 0
    assert report["different_subject"]["carded"] == 0
    assert report["different_subject"]["retired_by"] == {}
    assert report["per_pair"] == [
        {
            "id": "p01",
            "kind": "same_subject_change",
            "outcome": "superseded",
            "detail": "b replaced a",
            "path": "correction",
        },
        {"id": "p02", "kind": "different_subject", "outcome": "nothing", "detail": "", "path": ""},
    ]


def test_the_text_report_names_the_bar_figures() -> None:
    text = run(str(SMALL), "--verbose")

    assert "same subject       1 of 1 superseded or carded (1.00)" in text
    assert "different subject  0 of 1 superseded or merged, 0 carded (0.00)" in text
    assert "  same subject      retired by: correction 1" in text
    assert "-- p01 same_subject_change: superseded (b replaced a; correction)" in text


def test_it_refuses_a_missing_file_and_an_unknown_kind(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        run(str(tmp_path / "none.jsonl"))
    bad = tmp_path / "bad.jsonl"
    pair = json.loads(SMALL.read_text().splitlines()[0]) | {"kind": "maybe"}
    bad.write_text(json.dumps(pair) + "\n")
    with pytest.raises(CommandError, match=r"bad.jsonl:1: not a probe pair \(.*kind 'maybe'"):
        run(str(bad))


def _fact(fact_id: str, at: str, text: str, agent: str) -> dict[str, str]:
    return {"id": fact_id, "text": text, "scope": "home", "agent": agent, "at": f"{at}T09:00:00Z"}


STORY = {
    "id": "s1",
    "domain": "personal",
    "facts": [
        _fact("f1", "2026-01-05", "The user lives in Lisbon.", "pa-chat"),
        _fact("f2", "2026-01-06", "The user's dentist is Dr. Silva in Lisbon.", "pa-calendar"),
        _fact("f3", "2026-03-02", "The user says they moved to Berlin last month.", "pa-chat"),
        _fact("f4", "2026-04-01", "The user's sister visited Berlin in March.", "pa-chat"),
    ],
    "expected_flags": [],
    "current": [
        {"subject": "Home city", "fact_id": "f3", "status": "clear", "about": ["f1", "f3"]},
        {"subject": "Dentist", "fact_id": "f2", "status": "clear", "about": ["f2"]},
    ],
    "must_not_flag": [],
}


def test_a_story_files_clear_subjects_are_replayed_as_pairs_with_their_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stories = tmp_path / "stories.jsonl"
    stories.write_text(json.dumps(STORY) + "\n")
    committed: list[tuple[str, str, str]] = []
    real_ingest = probes.ingest

    def ingest(workspace, text, *, at, scope="", agent=""):  # type: ignore[no-untyped-def]
        committed.append((text, agent, scope))
        return real_ingest(workspace, text, at=at, scope=scope, agent=agent)

    monkeypatch.setattr(probes, "ingest", ingest)

    report = json.loads(run(str(stories), "--stories", "--json"))
    text = run(str(stories), "--stories")

    # The move retires Lisbon; the dentist (another subject) and the sister's visit (a later fact) retire nothing.
    assert report["same_subject_change"]["superseded"] == 1
    assert (report["different_subject"]["n"], report["different_subject"]["wrongly_retired"]) == (2, 0)
    assert (report["current_kept"]["n"], report["current_kept"]["wrongly_retired"]) == (2, 0)
    assert "later fact         0 of 2 retired the current fact, 0 carded (0.00)" in text
    assert ("The user lives in Lisbon.", "pa-chat", "home") in committed
    assert ("The user's dentist is Dr. Silva in Lisbon.", "pa-calendar", "home") in committed
