"""The tier-1 network at run time: its labels, its weights on disk, its forward pass, the rules' vetoes.

``training/detector.py`` fits the network and writes it with :func:`save_model`;
the running hub only loads and applies it. Nothing here imports training code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from conflicts.detection import rules
from conflicts.detection.verdict import Relation
from memoryhub.arrays import load_npz

if TYPE_CHECKING:
    from numpy.typing import NDArray

# The order of the network's (and the cross-encoder's) outputs.
LABELS = ("compatible", "contradiction", "duplicate", "update")
RELATION_OF_LABEL = {
    "compatible": Relation.COMPATIBLE,
    "contradiction": Relation.TRUE_CONTRADICTION,
    "duplicate": Relation.DUPLICATE,
    "update": Relation.TEMPORAL_CHANGE,
}


# A pair with a side this long (in words) is a document read against a claim — adversarial NLI's
# premises are paragraphs — not two facts. Such pairs get their own contradiction offset
# (``Model.long_bias``), chosen by nested cross-validation like the label offsets: read as two
# facts, the model calls too few of them contradictions (docs/DETECTION.md, "Long pairs").
LONG_PAIR_WORDS = 30


def long_pairs(a_texts: list[str], b_texts: list[str]) -> NDArray[np.bool_]:
    return np.array(
        [max(len(a.split()), len(b.split())) > LONG_PAIR_WORDS for a, b in zip(a_texts, b_texts, strict=True)],
        dtype=bool,
    )


@dataclass
class Model:
    """Standardisation, one hidden ReLU layer (or none), softmax over ``LABELS``, a temperature."""

    mean: NDArray[np.float32]
    scale: NDArray[np.float32]
    w1: NDArray[np.float32]
    b1: NDArray[np.float32]
    w2: NDArray[np.float32] | None
    b2: NDArray[np.float32] | None
    temperature: float = 1.0
    bias: NDArray[np.float32] | None = None  # per-label offsets on log-probabilities (see tune_bias)
    long_bias: NDArray[np.float32] | None = None  # added for long pairs (``LONG_PAIR_WORDS``)

    def logits(self, x: NDArray[np.float32]) -> NDArray[np.float32]:
        h = (x - self.mean) / self.scale
        h = h @ self.w1 + self.b1
        if self.w2 is not None and self.b2 is not None:
            h = np.maximum(h, 0.0) @ self.w2 + self.b2
        out: NDArray[np.float32] = h.astype(np.float32)
        return out

    def probabilities(self, x: NDArray[np.float32], long: NDArray[np.bool_] | None = None) -> NDArray[np.float32]:
        z = self.logits(x) / self.temperature
        if self.bias is not None:
            z = z + self.bias
        if self.long_bias is not None and long is not None and long.any():
            z[long] += self.long_bias
        return softmax(z)


def softmax(z: NDArray[np.float32]) -> NDArray[np.float32]:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: NDArray[np.float32] = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    return out


UPDATE = LABELS.index("update")
CONTRADICTION = LABELS.index("contradiction")
# Sure enough to count as the same subject without shared words (classifier.SURE_WITHOUT_SHARED_WORDS).
BROKEN_HABIT_PROBABILITY = 0.9


def apply_rules(probs: NDArray[np.float32], signals: list[rules.RuleSignals]) -> NDArray[np.float32]:
    """Tier 0 on top of tier 1.

    With neither times nor change wording, nothing says time passed, so a
    temporal change is ruled out and its probability goes to the other labels.
    A broken habit ("doesn't drink alcohol" / "a couple of pints of IPA") is a
    contradiction the model cannot see without the world knowledge the rule has.
    """
    out = probs.copy()
    for i, s in enumerate(signals):
        if not s.change_possible and out[i, UPDATE] < 1.0:
            out[i, UPDATE] = 0.0
            out[i] /= out[i].sum()
        if s.broken_habit and out[i, CONTRADICTION] < BROKEN_HABIT_PROBABILITY:
            rest = 1.0 - out[i, CONTRADICTION]
            out[i] *= (1.0 - BROKEN_HABIT_PROBABILITY) / rest if rest > 0 else 0.0
            out[i, CONTRADICTION] = BROKEN_HABIT_PROBABILITY
    return out


def save_model(model: Model, path: Path, metadata: dict[str, Any]) -> None:
    arrays: dict[str, NDArray[np.float32]] = {
        "mean": model.mean,
        "scale": model.scale,
        "w1": model.w1,
        "b1": model.b1,
        "temperature": np.array([model.temperature], dtype=np.float32),
        "bias": model.bias if model.bias is not None else np.zeros(len(LABELS), dtype=np.float32),
        "long_bias": model.long_bias if model.long_bias is not None else np.zeros(len(LABELS), dtype=np.float32),
    }
    if model.w2 is not None and model.b2 is not None:
        arrays["w2"] = model.w2
        arrays["b2"] = model.b2
    path.parent.mkdir(parents=True, exist_ok=True)
    # np.savez_compressed writes zip timestamps from the arrays only, so equal models give equal files.
    np.savez_compressed(path, **arrays)  # type: ignore[arg-type]
    path.with_suffix(".json").write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def load_model(path: Path) -> Model:
    z = load_npz(path)
    return Model(
        mean=z["mean"],
        scale=z["scale"],
        w1=z["w1"],
        b1=z["b1"],
        w2=z.get("w2", None),
        b2=z.get("b2", None),
        temperature=float(z["temperature"][0]),
        bias=z.get("bias", None),
        long_bias=z.get("long_bias", None),
    )
