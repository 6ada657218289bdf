"""Train the speech-act classifier (``memories/speech_acts.py``): softmax regression in numpy.

Data: ``training/data/speech_acts.txt`` (hand-written for this project: questions,
greetings and thanks, opinions and pleasantries, plans, chat-voice claims) plus
claims taken from our own domain pairs (``training/data/domain_pairs.jsonl``,
both sides of every pair: agent-style statements). Nothing from the DECODE
dialogues is trained on: those lines are the test (``tests/memories/test_speech_acts.py``).

Classes are weighted to balance them (claims outnumber the rest ten to one).
Deterministic: full-batch gradient descent from zeros.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from memories.speech_acts import CLAIM, LABELS, SURFACE_FEATURES, features

DATA_DIR = Path(__file__).with_name("data")
SPEECH_ACTS = DATA_DIR / "speech_acts.txt"
DOMAIN_PAIRS = DATA_DIR / "domain_pairs.jsonl"


def examples(*, acts_path: Path = SPEECH_ACTS, domain_path: Path = DOMAIN_PAIRS) -> list[tuple[str, str]]:
    rows: dict[str, str] = {}
    for line in acts_path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, _, text = line.partition("\t")
        if label not in LABELS:
            raise ValueError(f"unknown speech act {label!r} in {acts_path}")
        rows[text.strip()] = label
    for line in domain_path.read_text(encoding="utf-8").splitlines():
        pair = json.loads(line)
        for side in ("a", "b"):
            rows.setdefault(pair[side].strip(), CLAIM)
    return sorted(rows.items(), key=lambda item: item[0])


def fit(
    x: np.ndarray[Any, Any],
    y: np.ndarray[Any, Any],
    *,
    classes: int,
    l2: float = 1e-3,
    epochs: int = 600,
    rate: float = 2.0,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    counts = np.bincount(y, minlength=classes).astype(np.float64)
    sample_weight = (len(y) / (classes * np.maximum(counts, 1)))[y]
    sample_weight /= sample_weight.sum()
    weight = np.zeros((x.shape[1], classes))
    bias = np.zeros(classes)
    onehot = np.eye(classes)[y]
    for _ in range(epochs):
        logits = x @ weight + bias
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        grad = (p - onehot) * sample_weight[:, None]
        weight -= rate * (x.T @ grad + l2 * weight)
        bias -= rate * grad.sum(axis=0)
    return weight.astype(np.float32), bias.astype(np.float32)


def train(*, out_path: Path, embed: Callable[[list[str]], Any], folds: int = 5) -> dict[str, Any]:
    rows = examples()
    texts = [t for t, _ in rows]
    y = np.array([LABELS.index(label) for _, label in rows])
    vectors = np.asarray(embed(texts), dtype=np.float32)
    x = np.stack([features(t, v) for t, v in zip(texts, vectors, strict=True)]).astype(np.float64)
    # Held-out figures: every k-th example in a fold (the file is sorted by text, so folds mix labels).
    predicted = np.zeros(len(y), dtype=int)
    for fold in range(folds):
        test = np.arange(len(y)) % folds == fold
        weight, bias = fit(x[~test], y[~test], classes=len(LABELS))
        predicted[test] = np.argmax(x[test] @ weight + bias, axis=1)
    report = {}
    for index, label in enumerate(LABELS):
        tp = int(((predicted == index) & (y == index)).sum())
        precision = tp / max(1, int((predicted == index).sum()))
        recall = tp / max(1, int((y == index).sum()))
        f1 = 2 * precision * recall / max(1e-9, precision + recall)
        report[label] = {
            "n": int((y == index).sum()),
            "precision": round(precision, 3),
            "recall": round(recall, 3),
            "f1": round(f1, 3),
        }
    weight, bias = fit(x, y, classes=len(LABELS))
    np.savez(out_path, weight=weight, bias=bias, labels=np.array(LABELS), surface=np.array(SURFACE_FEATURES))
    return {"examples": len(y), "held_out": report}
