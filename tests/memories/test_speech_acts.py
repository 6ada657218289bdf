"""Speech acts of real dialogue lines (DECODE human turns, labelled by hand) and of agent facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memories.embeddings import MiniLMEmbedder, embed_texts
from memories.speech_acts import CLAIM, GREETING, QUESTION, does_more_than_claim, is_claim, speech_act_of

# 61 lines drawn at random (seed 20261125) from the human turns of shared/eval/decode-human-bot.jsonl
# and labelled by hand before the classifier read them: a line is a claim if any of its sentences
# states something about the world or the speaker; two ambiguous lines were left out.
LABELLED = json.loads(Path(__file__).with_name("decode_speech_acts.json").read_text(encoding="utf-8"))


def acts(texts: list[str]) -> list[str]:
    return [speech_act_of(t, v, MiniLMEmbedder.name) for t, v in zip(texts, embed_texts(texts), strict=True)]


def test_dialogue_lines_are_told_claims_or_not() -> None:
    texts = [text for text, _ in LABELLED]
    gold = [is_claim(label) for _, label in LABELLED]

    predicted = [is_claim(act) for act in acts(texts)]

    right = sum(p == g for p, g in zip(predicted, gold, strict=True))
    claims_kept = sum(p for p, g in zip(predicted, gold, strict=True) if g) / sum(gold)
    assert right / len(gold) >= 0.85, f"{right} of {len(gold)}"
    # Wrongly skipping a claim hides a real conflict: nearly every claim must stay one.
    assert claims_kept >= 0.9


@pytest.mark.parametrize(
    ("text", "act"),
    [
        ("The user lives in Lisbon.", CLAIM),
        ("Acme Corp has 200 seats on Pro.", CLAIM),
        ("Moved the Celery broker off RabbitMQ onto SQS. Reason: the cluster kept losing quorum.", CLAIM),
        ("Hi! How are you doing?", GREETING),
        ("Where did you grow up?", QUESTION),
    ],
)
def test_agent_facts_are_claims_and_small_talk_is_not(text: str, act: str) -> None:
    assert acts([text]) == [act]


def test_a_turn_with_a_claim_among_a_greeting_and_a_question_is_a_claim() -> None:
    assert acts(["Hi! I have a dog named Charlie. Do you have any pets?"]) == [CLAIM]


def test_without_minilm_vectors_only_a_bare_question_is_told_apart() -> None:
    assert speech_act_of("Where do you live?", [0.0] * 384, "text-embedding-3-small-384") == QUESTION
    assert speech_act_of("Thanks so much!", [0.0] * 384, "text-embedding-3-small-384") == CLAIM


@pytest.mark.parametrize(
    ("text", "more"),
    [
        ("Hello! The new studio has a kiln and two wheels.", True),  # greets as well
        ("The new studio has a kiln and two wheels. Have you been yet?", True),  # asks as well
        ("The new studio has a kiln and two wheels. It opens at eight on weekdays.", False),  # two claims
        ("The new studio has a kiln and two wheels.", False),  # one sentence says one thing
    ],
)
def test_a_turn_that_greets_or_asks_as_well_as_claims_does_more_than_claim(text: str, more: bool) -> None:
    assert does_more_than_claim(text) is more
