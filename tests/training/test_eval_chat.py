"""``manage.py eval_chat`` on small fixtures, through real ingestion and the detective; and its notation."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memoryhub.errors import InvalidInput
from training.chat import in_split, parse_own_chats, read_decode, split_of

FIXTURES = Path(__file__).parent / "fixtures"
CHAT = FIXTURES / "chat-small.txt"
DECODE = FIXTURES / "decode-small.jsonl"


def run(*args: str) -> str:
    out = StringIO()
    call_command("eval_chat", "--own", str(CHAT), "--decode", str(DECODE), *args, stdout=out)
    return out.getvalue()


def test_the_notation_gives_turns_a_minute_apart_and_facts_by_day() -> None:
    first, second = parse_own_chats(CHAT.read_text())

    assert (first.id, second.id) == ("k1", "k2")
    assert [(t.agent, t.at.isoformat()) for t in first.turns] == [
        ("user", "2025-03-03T10:00:00+00:00"),
        ("bot", "2025-03-03T10:01:00+00:00"),
    ]
    assert [f.at.date().isoformat() for f in first.facts] == ["2025-03-03", "2025-06-10", "2025-09-15"]
    assert {f.agent for f in first.facts} == {"extractor"}
    assert [t.at.isoformat() for t in second.turns] == ["2025-04-01T18:00:00+00:00", "2025-04-08T18:00:00+00:00"]
    with pytest.raises(InvalidInput, match="line 2: a turn before the first session"):
        parse_own_chats("== x\nuser: hi\n")
    with pytest.raises(InvalidInput, match="not a session, turn or fact line"):
        parse_own_chats("== x\n-- 2025-01-01 10:00\nhuman: hi\n")


def test_decode_keeps_the_dialogues_without_a_contradiction() -> None:
    (dialogue,) = read_decode(DECODE)

    assert dialogue.id == "d1"
    assert [t.agent for t in dialogue.turns] == ["human", "bot", "human", "bot"]
    assert read_decode(DECODE, limit=1)[0].id == "d1"


@pytest.mark.django_db(transaction=True)
def test_it_counts_what_each_set_sets_off() -> None:
    report = json.loads(run("--json"))

    assert report["bar"] == {"cards_per_1000": 10.0, "automatic_per_1000": 10.0, "contradicted_percent": 2.0}
    assert set(report["sets"]) == {"own_turns", "own_facts", "decode_turns"}
    turns, facts, decode = (report["sets"][name] for name in ("own_turns", "own_facts", "decode_turns"))
    assert (turns["conversations"], turns["facts"]) == (2, 4)
    assert (facts["conversations"], facts["facts"]) == (1, 3)  # k2 has no fact lines
    assert (decode["conversations"], decode["facts"]) == (1, 4)
    # The queue facts are a move off RabbitMQ (an automatic supersede) and a return to it (a card):
    # noise in chat is counted the same way as signal.
    assert facts["supersedes"] == 1
    assert facts["cards"] >= 1
    assert facts["cards_per_1000"] == round(facts["cards"] * 1000 / 3, 2)
    assert facts["automatic_per_1000"] == round((facts["supersedes"] + facts["merges"]) * 1000 / 3, 2)
    assert any("supersede: 'Background jobs go through RabbitMQ" in e for e in facts["examples"])


@pytest.mark.django_db(transaction=True)
def test_the_text_report_has_a_row_per_set_and_the_bar() -> None:
    text = run("--no-decode")

    rows = [line.split()[0] for line in text.splitlines()[1:3]]
    assert rows == ["own_turns", "own_facts"]
    assert "bar: ≤ 10 cards and ≤ 10 automatic supersedes or merges per 1,000 facts, ≤ 2 % contradicted" in text


def test_it_refuses_a_missing_file_and_a_bad_limit(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        call_command("eval_chat", "--own", str(tmp_path / "none.txt"), stdout=StringIO())
    with pytest.raises(CommandError, match="--decode-limit must be at least 1"):
        run("--decode-limit", "0")


def test_the_split_is_frozen_by_a_hash_of_each_conversation_id() -> None:
    ids = [f"{dialogue}_{turn}" for dialogue in range(34700, 34900) for turn in range(2)]
    tune = [i for i in ids if split_of(i) == "tune"]

    # About half and half, and the same every time: a property of the id alone.
    assert 0.4 < len(tune) / len(ids) < 0.6
    assert [split_of(i) for i in ids] == [split_of(i) for i in reversed(ids)][::-1]
    assert {split_of("k1"), split_of("k2"), split_of("d1")} == {"validation"}
    assert read_decode(DECODE, split="tune") == []
    assert [c.id for c in read_decode(DECODE, split="validation")] == ["d1"]
    own = parse_own_chats(CHAT.read_text())
    assert in_split(own, "tune") == []
    assert in_split(own, "validation") == own
    assert in_split(own, "all") == own


@pytest.mark.django_db(transaction=True)
def test_a_split_replays_only_its_half() -> None:
    report = json.loads(run("--json", "--split", "tune"))

    assert report["split"] == "tune"
    assert {name: figures["conversations"] for name, figures in report["sets"].items()} == {
        "own_turns": 0,
        "own_facts": 0,
        "decode_turns": 0,
    }
