"""Which speech act a memory is: a claim about the world, or talk around it.

Chat lines are not all facts. "How are you?", "Thanks so much!", "That sounds
like fun" and "I'm going to try yoga next week" cannot contradict or replace
anything; only claims ("I work as a nurse", "Acme Corp has 200 seats") are
compared by conflict detection.

A softmax regression over the MiniLM sentence vector plus a few surface cues
(a question mark, an opening question word, an exclamation, length), trained by
``python manage.py train_speech_acts`` (``training/speech_acts.py``) and shipped
as ``speech_acts.npz`` beside this module: numpy only at run time. A vector from
another embedder (OpenAI) does not fit the weights; then only the surface cues
speak (a question is a question), and everything else counts as a claim —
comparing too much is what the hub did before, never losing a fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from memories.embeddings import MiniLMEmbedder, check_sha256, embedder_named
from memoryhub.arrays import load_npz

WEIGHTS = Path(__file__).with_name("speech_acts.npz")
# Checked before the weights are used; `train_speech_acts` prints the new one after a retrain.
WEIGHTS_SHA256 = "49ffd8c78a3099b815ccbf7a4adf9c3f18ccae1a7b043ee4c72e7b106baedc53"

CLAIM = "claim"
QUESTION = "question"
GREETING = "greeting"  # greetings, thanks, farewells
OPINION = "opinion"  # reactions and opinions about the conversation, pleasantries
PLAN = "plan"  # intentions and plans: not (yet) true of the world
LABELS = (CLAIM, QUESTION, GREETING, OPINION, PLAN)
CHOICES = [(label, label) for label in LABELS]

# Below this probability of its best label a memory stays a claim: wrongly skipping a claim
# hides a real conflict, wrongly comparing a pleasantry is what the hub did before.
MIN_NON_CLAIM_PROBABILITY = 0.6

_QUESTION_OPENING = re.compile(
    r"^\s*(?:who|what|when|where|why|how|which|whose|do|does|did|is|are|was|were|can|could|would|will|"
    r"should|have|has|any)\b",
    re.IGNORECASE,
)
SURFACE_FEATURES = ("ends_question", "has_question", "opens_question_word", "exclamation", "short", "first_person")


def surface_features(text: str) -> list[float]:
    stripped = text.strip()
    words = stripped.split()
    return [
        float(stripped.endswith("?")),
        float("?" in stripped),
        float(bool(_QUESTION_OPENING.match(stripped))),
        float("!" in stripped),
        float(len(words) <= 4),
        float(bool(re.match(r"^\s*(?:i|i'm|i'll|we|we're|my)\b", stripped, re.IGNORECASE))),
    ]


def features(text: str, vector: Any) -> np.ndarray[Any, Any]:
    return np.concatenate([np.asarray(vector, dtype=np.float32), np.asarray(surface_features(text), np.float32)])


@lru_cache(maxsize=1)
def _weights() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], tuple[str, ...]]:
    check_sha256(WEIGHTS, WEIGHTS_SHA256)
    stored = load_npz(WEIGHTS)
    return stored["weight"].astype(np.float32), stored["bias"].astype(np.float32), tuple(stored["labels"])


def probabilities(text: str, vector: Any) -> dict[str, float]:
    weight, bias, labels = _weights()
    logits = features(text, vector) @ weight + bias
    logits -= logits.max()
    exp = np.exp(logits)
    return {str(label): float(p) for label, p in zip(labels, exp / exp.sum(), strict=True)}


def _act(text: str, vector: Any) -> str:
    found = probabilities(text, vector)
    best = max(found, key=lambda label: found[label])
    if best != CLAIM and found[best] < MIN_NON_CLAIM_PROBABILITY:
        return CLAIM
    return best


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    return [part for part in (p.strip() for p in _SENTENCE_END.split(text.strip())) if part]


def speech_act_of(
    text: str, vector: Any = None, embedding_model: str = "", embed: Callable[[list[str]], Any] | None = None
) -> str:
    """The memory's speech act; ``vector`` is its stored embedding (MiniLM's, or the cues decide).

    A chat turn often does several things ("Hi! I have a dog named Charlie. Do you
    have pets?"): when the whole reads as something other than a claim, or it asks
    or exclaims, each sentence is read on its own (embedded with ``embed``), and
    the turn is a claim if any sentence is — its claim must still be compared.
    """
    if vector is None or (embedding_model and embedding_model != MiniLMEmbedder.name):
        return QUESTION if text.strip().endswith("?") and not re.search(r"[.!]\s", text) else CLAIM
    whole = _act(text, vector)
    parts = sentences(text)
    if len(parts) < 2 or (whole == CLAIM and not re.search(r"[?!]", text)):
        return whole
    acts = _sentence_acts(parts, embed)
    if CLAIM in acts:
        return CLAIM
    return whole if whole != CLAIM else acts[-1]


def does_more_than_claim(text: str, embed: Callable[[list[str]], Any] | None = None) -> bool:
    """A turn of a conversation, not one statement: two or more sentences, one of which asks, greets, reacts or
    plans ("Classic. Is the flat starting to feel like home?", "Hey! I've lived in Kreuzberg for four years.")."""
    parts = sentences(text)
    return len(parts) > 1 and any(act != CLAIM for act in _sentence_acts(parts, embed))


def _sentence_acts(parts: list[str], embed: Callable[[list[str]], Any] | None) -> list[str]:
    """Each sentence's speech act, read on its own."""
    vectors = (embed or _embed)(parts)
    return [_act(part, vector) for part, vector in zip(parts, vectors, strict=True)]


def _embed(texts: list[str]) -> Any:
    return embedder_named(MiniLMEmbedder.name).embed(texts)


def is_claim(act: str) -> bool:
    return act in ("", CLAIM)
