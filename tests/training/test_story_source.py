"""The project's own stories: the notation, the seeded split, and the frozen validation files."""

from __future__ import annotations

import hashlib
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from training.slot_pairs import SLOT_READER_BATTERIES
from training.story_source import SourceError, parse_probes, parse_source, split, split_probes

DATA = Path(__file__).resolve().parents[2] / "training" / "data"
# Frozen on 2026-11-25 (docs/DETECTION.md): a change here means the validation split was touched.
FROZEN = {
    "stories-own-validation.jsonl": "97ce2122a7c5ba0b1b7f720ee3c21868c35c60a1cc1c2cc0b7c465f16248af25",
    "probes-validation.jsonl": "c58ea337a627eeb3836770e23239d2ded25b883b71455911039364e88abee0bc",
    # Frozen on 2026-11-26 (training/slot_pairs.py).
    "slot-pairs-validation.jsonl": "0badc296ffda7f6b48f204325aa985356d693e796178449a3cc44cb8cc0b2a1f",
    # Frozen on 2026-11-29 (docs/DETECTION.md, "A slot reader retrained with pairs of stages").
    "stage-pairs-validation.jsonl": "7b23749e36d6079f5a66d6d57e15cf6db52945b07b0af250e248bf068dc3cae9",
    # Written blind and frozen on 2026-11-29 (docs/DETECTION.md, "A fresh validation battery").
    "probes-fresh-validation.jsonl": "ce9639915b733d1cab89209b8d4e9ea0d170ca853a654508612680272b9ab08f",
    # 48 stories written blind and frozen on 2026-11-29 (docs/DETECTION.md, "Fresh stories, written blind").
    "stories-fresh-validation.jsonl": "90a3379f54e8d9e78f438099e932f2702225fc68578d1e49ef353930a19fef8f",
    # 12 friendly chats written blind and frozen on 2026-11-29 (docs/DETECTION.md, "Fresh chats, written blind").
    "chat-fresh-validation.txt": "a0722e29e559474095307e2a135441811daf1474d474ff483ee9b7b9dcd44129",
    # 6 more written blind by a fourth helper and frozen on 2026-11-29 (docs/DETECTION.md, "Chat noise").
    "chat-fresh-validation-2.txt": "b629e611ec2d7dc9bf616a91e2f06867516f70c6db9611dcff28da0aed5b7fd0",
    # 48 stories of a fourth blind batch, split by writer and frozen on 2026-11-30 (docs/DETECTION.md, thirteenth).
    "stories-fresh-validation-2.jsonl": "c24c089cf5158becdb5b6ddd8f231ffa29f1e158e1abe2046c211185b5e39aa4",
    # 48 stories of a fifth blind batch, split by writer and frozen on 2026-11-30 (docs/DETECTION.md, fifteenth).
    "stories-fresh-validation-3.jsonl": "30c64dd87f032fba5b380ad637bf8e26e887c454dd3829510c2e3864eb360271",
    # 48 stories of a sixth blind batch, split by writer and frozen on 2026-12-01 (docs/DETECTION.md, twentieth).
    "stories-fresh-validation-4.jsonl": "3a728c5ec96b2255d6f2d3d7bab0668a19e834596fff39afde103823f918940e",
    # 48 stories of a seventh blind batch, split by writer and frozen on 2026-12-01 (docs/DETECTION.md, twentieth).
    "stories-fresh-validation-5.jsonl": "27ac4629e381dbbaeabf0b6976f18535f700b0a0d3143838728144c6c0aa966b",
    # 48 stories of an eighth blind batch, split by writer and frozen on 2026-12-01 (docs/DETECTION.md, twenty-first).
    "stories-fresh-validation-6.jsonl": "41ccf9b77b6dda0faf3e4078f4869b4b2acabbf292de0e5e87f9af70f82413d5",
    # 48 stories of a ninth blind batch, split by writer and frozen on 2026-12-01 (docs/DETECTION.md, twenty-second).
    "stories-fresh-validation-7.jsonl": "06fc582a8e9a647c831962db8f35c90200231b04764ec78e59519937da2658f3",
}

STORY = """
== t01 personal
f1 2026-09-02 pa-chat profile | The user lives in Lisbon.
f2 2026-09-02 pa-chat family | The user's sister lives in Porto.
f3 2026-11-10 14:30 pa-chat profile | The user says they moved to Berlin last month.
cur Home city | f3 clear | f1
flag stale f1 f3 | not really, but a flag line
trap f2 f3 | the user vs the sister
"""


def test_the_notation_gives_the_shared_story_shape() -> None:
    (story,) = parse_source(STORY)

    assert (story["id"], story["domain"]) == ("t01", "personal")
    assert [f["at"] for f in story["facts"]] == ["2026-09-02T09:00:00Z", "2026-09-02T09:07:00Z", "2026-11-10T14:30:00Z"]
    assert story["facts"][2] == {
        "id": "f3",
        "text": "The user says they moved to Berlin last month.",
        "scope": "profile",
        "agent": "pa-chat",
        "at": "2026-11-10T14:30:00Z",
    }
    assert story["current"] == [{"subject": "Home city", "fact_id": "f3", "status": "clear", "about": ["f1", "f3"]}]
    assert story["expected_flags"] == [
        {"kind": "stale", "fact_ids": ["f1", "f3"], "note": "not really, but a flag line"}
    ]
    assert story["must_not_flag"] == [{"fact_ids": ["f2", "f3"], "why": "the user vs the sister"}]


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (STORY.replace("trap f2 f3", "trap f2 f9"), r"unknown facts \['f9'\]"),
        (STORY.replace("flag stale", "flag odd"), "flag KIND"),
        (STORY.replace("f3 clear", "f3 settled"), "status settled"),
        (STORY + "f3 2026-11-11 pa-chat x | again\n", "fact ids repeat"),
        (STORY.replace("cur Home city | f3 clear | f1\n", ""), "no current-truth subject"),
        ("f1 2026-01-01 a b | before any story\n", "before the first story"),
    ],
)
def test_the_notation_refuses_mistakes(broken: str, message: str) -> None:
    with pytest.raises(SourceError, match=message):
        parse_source(broken)


def test_probes_are_read_in_order_and_split_per_kind() -> None:
    text = "\n".join(
        [f"same | 2026-01-0{i} | 2026-02-0{i} | a{i} | b{i}" for i in range(1, 5)]
        + [f"diff | 2026-03-0{i} | 2026-03-0{i} | c{i} | d{i}" for i in range(1, 5)]
    )
    probes = parse_probes(text)
    assert [p["id"] for p in probes] == [f"p0{i}" for i in range(1, 9)]
    # Same day: the second fact is half an hour later, so the pair has an order.
    assert (probes[4]["a_time"], probes[4]["b_time"]) == ("2026-03-01T09:00:00Z", "2026-03-01T09:30:00Z")
    dev, validation = split_probes(probes)
    for part in (dev, validation):
        assert sorted(p["kind"] for p in part) == ["different_subject"] * 2 + ["same_subject_change"] * 2
    assert split_probes(probes) == (dev, validation)
    with pytest.raises(SourceError, match="a_time after b_time"):
        parse_probes("same | 2026-02-01 | 2026-01-01 | a | b")


def test_the_split_is_seeded_and_a_third_goes_to_validation() -> None:
    stories = parse_source("\n".join(STORY.replace("t01", f"t{i:02d}") for i in range(12)))
    dev, validation = split(stories)
    assert (len(dev), len(validation)) == (8, 4)
    assert split(list(reversed(stories))) == (dev, validation)
    assert {s["id"] for s in dev} | {s["id"] for s in validation} == {s["id"] for s in stories}


def test_the_committed_files_are_what_the_sources_give_and_validation_is_frozen(tmp_path: Path) -> None:
    shutil.copytree(DATA / "stories-own", tmp_path / "stories-own")
    shutil.copy(DATA / "probes-own.txt", tmp_path)
    shutil.copytree(DATA / "slot-pairs", tmp_path / "slot-pairs")
    shutil.copytree(DATA / "stage-pairs", tmp_path / "stage-pairs")
    for battery in SLOT_READER_BATTERIES:
        shutil.copy(DATA / battery, tmp_path)
    call_command("build_stories", "--data", str(tmp_path), stdout=StringIO())

    built = (
        "stories-own-dev.jsonl",
        "stories-own-validation.jsonl",
        "probes-dev.jsonl",
        "probes-validation.jsonl",
        "slot-pairs-train.jsonl",
        "slot-pairs-validation.jsonl",
        "lookup-pairs-train.jsonl",
        "stage-pairs-validation.jsonl",
        "slot-reader-train.jsonl",
    )
    for name in built:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name
    for name, digest in FROZEN.items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name
    dev_lines = (DATA / "stories-own-dev.jsonl").read_text().splitlines()
    validation_lines = (DATA / "stories-own-validation.jsonl").read_text().splitlines()
    assert len(dev_lines) >= 100
    assert len(validation_lines) >= 50


def test_build_stories_names_a_broken_source(tmp_path: Path) -> None:
    (tmp_path / "stories-own").mkdir()
    (tmp_path / "stories-own" / "bad.txt").write_text(STORY.replace("trap f2 f3", "trap f2 f9"))
    (tmp_path / "probes-own.txt").write_text("")
    with pytest.raises(CommandError, match="unknown facts"):
        call_command("build_stories", "--data", str(tmp_path), stdout=StringIO())
