from __future__ import annotations

import datetime as dt
import itertools

from conflicts.forgetting import StoryFact
from conflicts.story import batches, short_id, story_line

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def story(count: int, length: int = 200) -> list[StoryFact]:
    return [
        StoryFact(
            id=f"{n:08d}-x", text=f"fact {n} " + "x" * length, scope="api", agent="bot", at=T0 + dt.timedelta(hours=n)
        )
        for n in range(count)
    ]


def test_a_line_reads_id_time_scope_agent_text() -> None:
    fact = StoryFact(id="3f2a9c1e-0000", text="We use  REST\nnow", scope="", agent="planner", at=T0)

    assert story_line(fact) == "3f2a9c1e · 2026-01-01 00:00 · - · planner · We use REST now"
    assert short_id(fact) == "3f2a9c1e"


def test_a_short_story_is_one_batch() -> None:
    [batch] = batches(story(10))

    assert len(batch.facts) == 10


def test_batches_keep_order_respect_the_size_and_overlap() -> None:
    facts = story(400)

    parts = batches(facts, size=24_000, overlap=2_400)

    assert len(parts) > 3
    assert all(len(p.text) <= 24_000 for p in parts)
    for before, after in itertools.pairwise(parts):
        shared = [f.id for f in before.facts if f in after.facts]
        assert shared, "consecutive batches overlap"
        assert shared == [f.id for f in before.facts[-len(shared) :]]
        assert shared == [f.id for f in after.facts[: len(shared)]]
    seen: list[str] = []
    for part in parts:
        seen += [str(f.id) for f in part.facts if str(f.id) not in seen]
    assert seen == [str(f.id) for f in facts]  # every fact, in order


def test_an_oversized_fact_still_gets_a_batch() -> None:
    facts = story(3, length=30_000)

    parts = batches(facts, size=24_000, overlap=2_400)

    assert [len(p.facts) for p in parts] == [1, 1, 1]
