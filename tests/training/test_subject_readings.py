"""`manage.py subject_readings`: every story fact's reading, and which readings two versions disagree on, with
frozen validation facts counted and never shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from training.subject_readings import Reading, compare, fact_key, readings

STORY = {
    "id": "s1",
    "facts": [
        {"id": "f1", "text": "The user lives in Lisbon.", "agent": "a", "at": "2026-09-02T09:00:00Z"},
        {"id": "f2", "text": "The user moved to Berlin.", "agent": "a", "at": "2026-11-10T09:00:00Z"},
    ],
    "expected_flags": [],
    "current": [],
    "must_not_flag": [],
}


def _write(path: Path) -> Path:
    path.write_text(json.dumps(STORY) + "\n")
    return path


def test_every_fact_is_read_and_a_frozen_files_texts_are_hashed(tmp_path: Path) -> None:
    dev = _write(tmp_path / "stories-dev.jsonl")
    frozen = _write(tmp_path / "stories-own-validation.jsonl")

    read = readings([dev, frozen])

    assert read["stories-dev.jsonl|The user moved to Berlin."] == ["user", "home city", ["moved to"]]
    frozen_keys = [key for key in read if key.startswith("stories-own-validation.jsonl|")]
    assert len(frozen_keys) == 2
    assert not any("Lisbon" in key or "Berlin" in key for key in frozen_keys)
    assert fact_key(frozen, "The user lives in Lisbon.") in frozen_keys


def test_a_comparison_shows_dev_changes_and_only_counts_frozen_ones() -> None:
    before: dict[str, Reading] = {"d.jsonl|A fact.": ["a", "", []], "d.jsonl|Same.": ["c", "", []]}
    after: dict[str, Reading] = {"d.jsonl|A fact.": ["a fact", "", []], "d.jsonl|Same.": ["c", "", []]}
    before["x-validation.jsonl|0f"], after["x-validation.jsonl|0f"] = ["b", "", []], ["b", "role", []]

    comparison = compare(before, after)

    shown = [(changed.key, changed.before, changed.after) for changed in comparison.shown]
    assert shown == [("d.jsonl|A fact.", ["a", "", []], ["a fact", "", []])]
    assert comparison.frozen_changed == 1


def test_the_command_writes_readings_then_compares_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stories = _write(tmp_path / "stories-dev.jsonl")
    out = tmp_path / "readings.json"
    call_command("subject_readings", str(stories), "--out", str(out))
    changed = json.loads(out.read_text())
    changed["stories-dev.jsonl|The user lives in Lisbon."] = ["someone else", "", []]
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(changed))
    capsys.readouterr()

    call_command("subject_readings", "--compare", str(out), str(edited))

    printed = capsys.readouterr().out
    assert "stories-dev.jsonl|The user lives in Lisbon." in printed
    assert "['user', 'home city', []] -> ['someone else', '', []]" in printed
    assert "1 dev facts read differently; 0 validation facts" in printed


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        call_command("subject_readings", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "r.json"))
    with pytest.raises(CommandError, match="give story files and --out"):
        call_command("subject_readings", str(_write(tmp_path / "s.jsonl")))
    not_json = tmp_path / "broken.json"
    not_json.write_text("{")
    with pytest.raises(CommandError, match="not a readings file"):
        call_command("subject_readings", "--compare", str(not_json), str(not_json))
    bad_story = tmp_path / "bad.jsonl"
    bad_story.write_text('{"id": "s1"}\n')
    with pytest.raises(CommandError, match="not a story"):
        call_command("subject_readings", str(bad_story), "--out", str(tmp_path / "r.json"))
