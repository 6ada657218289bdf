"""Scoring predictions on labelled pairs, in the shape ``eval_pairs --json`` prints.

Gold labels are the pairs-file labels (contradiction, compatible, duplicate,
update); predictions are relations. ``update`` ↔ ``temporal_change`` and it
only counts as found when the newer side (``b``) is the one that wins;
``contradiction`` ↔ ``true_contradiction``.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conflicts.detection.classifier import WEIGHTS_PATH, PairInput, classify_pairs, embeddings_for, load_detector
from conflicts.detection.cross_encoder import WEIGHTS_PATH as READER_PATH
from conflicts.detection.verdict import Relation
from training.baseline import BASELINE_EMBEDDER, baseline_relations
from training.dataset import LabelledPair

GOLD_OF_RELATION = {
    Relation.TRUE_CONTRADICTION: "contradiction",
    Relation.DUPLICATE: "duplicate",
    Relation.TEMPORAL_CHANGE: "update",
    Relation.COMPATIBLE: "compatible",
}
SCORED = ("contradiction", "duplicate", "update")


@dataclass(frozen=True)
class Scored:
    gold: str
    source: str
    relation: Relation
    current: str | None  # the side a temporal change says holds now


def _predicted(item: Scored) -> str:
    """The gold-label vocabulary for what was predicted; a temporal change with ``a`` winning is a miss."""
    label = GOLD_OF_RELATION.get(item.relation, "compatible")
    if label == "update" and item.current != "b":
        return "update_wrong_side"
    return label


def _prf(items: list[Scored], label: str) -> dict[str, float | int] | None:
    gold = sum(1 for i in items if i.gold == label)
    if gold == 0:
        return None
    predicted = sum(1 for i in items if _predicted(i) == label)
    hits = sum(1 for i in items if i.gold == label and _predicted(i) == label)
    precision = hits / predicted if predicted else 0.0
    recall = hits / gold
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4), "n": gold}


def _block(items: list[Scored]) -> dict[str, dict[str, float | int]]:
    out = {}
    for label in SCORED:
        scores = _prf(items, label)
        if scores is not None:
            out[label] = scores
    return out


def score(items: list[Scored], *, pairs_per_second: float, embedded_seconds: float = 0.0) -> dict[str, Any]:
    """Overall and per-source precision/recall/F1, the confusion matrix, and the speed.

    ``pairs_per_second`` counts the embedding of every distinct text; the rate
    with the embeddings given (as stored memories have them) is reported next to it.
    """
    by_source: dict[str, list[Scored]] = defaultdict(list)
    for item in items:
        by_source[item.source].append(item)
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for item in items:
        predicted = item.relation.value
        if item.relation == Relation.TEMPORAL_CHANGE and item.current != "b":
            predicted += " (a newer)"
        confusion[item.gold][predicted] += 1
    return {
        "overall": _block(items),
        "by_source": {source: _block(group) for source, group in sorted(by_source.items())},
        "confusion": {gold: dict(sorted(row.items())) for gold, row in sorted(confusion.items())},
        "pairs_per_second": round(pairs_per_second, 1),
        "pairs_per_second_embeddings_given": round(_rate_without(items, pairs_per_second, embedded_seconds), 1),
    }


def _rate_without(items: list[Scored], pairs_per_second: float, embedded_seconds: float) -> float:
    if not items or pairs_per_second <= 0:
        return 0.0
    remaining = len(items) / pairs_per_second - embedded_seconds
    return len(items) / remaining if remaining > 0 else 0.0


def evaluate_pairs(
    pairs: list[LabelledPair],
    *,
    baseline: bool = False,
    weights: Path | None = None,
    reader: Path | None = READER_PATH,
) -> dict[str, Any]:
    """Classify every pair (embedding included in the timing) and score it.

    Each distinct text is embedded once, in one batch, as the pipeline would
    with stored embeddings; ``baseline`` scores the cosine + negation-parity rule instead.
    ``reader`` is the cross-encoder the classifier consults (``None``: the network alone).
    """
    if not pairs:
        return score([], pairs_per_second=0.0)
    # Load the embedder and the weights before the clock starts: pairs/s is the steady-state rate.
    warm = [PairInput(pairs[0].a, pairs[0].b)]
    if baseline:
        baseline_relations(warm)
    else:
        classify_pairs(warm, weights=weights or WEIGHTS_PATH, reader=reader)  # loads the cross-encoder too
    started = time.perf_counter()
    inputs = [PairInput(p.a, p.b, p.a_time, p.b_time) for p in pairs]
    ua, ub = embeddings_for(inputs, BASELINE_EMBEDDER if baseline else load_detector(weights or WEIGHTS_PATH).embedder)
    embedded_seconds = time.perf_counter() - started
    inputs = [PairInput(p.a_text, p.b_text, p.a_time, p.b_time, a, b) for p, a, b in zip(inputs, ua, ub, strict=True)]
    items: list[Scored] = []
    if baseline:
        relations = baseline_relations(inputs)
        items = [Scored(p.label, p.source, r, None) for p, r in zip(pairs, relations, strict=True)]
    else:
        predictions = classify_pairs(inputs, weights=weights or WEIGHTS_PATH, reader=reader)
        items = [Scored(p.label, p.source, r.relation, r.current) for p, r in zip(pairs, predictions, strict=True)]
    elapsed = time.perf_counter() - started
    return score(
        items, pairs_per_second=len(pairs) / elapsed if elapsed > 0 else 0.0, embedded_seconds=embedded_seconds
    )
