"""Training the tier-1 classifier: data assembly, a numpy MLP, grouped cross-validation, calibration.

Deterministic: data in file order, one seeded generator for initialisation and
mini-batch order, single-threaded BLAS recommended (``OMP_NUM_THREADS=1``) so
floating-point sums happen in the same order on every run.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from conflicts.detection import rules
from conflicts.detection.features import DENSE_NAMES, HASHED_DIM, build_matrix, feature_dim
from conflicts.detection.network import (
    LABELS,
    RELATION_OF_LABEL,
    Model,
    apply_rules,
    long_pairs,
    save_model,
    softmax,
)
from conflicts.detection.verdict import Relation
from training.dataset import (
    PERSONA_SOURCE,
    LabelledPair,
    fold_of,
    group_ids,
    read_dialogues,
    read_pairs,
)
from training.evaluation import Scored, score
from training.slot_pairs import SOURCE as SLOT_SOURCE

# Slot pairs are ours and few, like the domain pairs (training/slot_pairs.py).
SLOT_WEIGHT = 5.0
# Sources written for this project; the public figures leave them out.
OURS = ("domain", SLOT_SOURCE)

if TYPE_CHECKING:
    from numpy.typing import NDArray

Embed = Callable[[list[str]], "NDArray[np.float32]"]


@dataclass(frozen=True)
class TrainConfig:
    # Chosen by grouped 5-fold cross-validation (docs/DETECTION.md): wider or longer-trained
    # networks and hashed word features all did the same or worse on held-out folds.
    hidden: int = 128
    epochs: int = 10
    batch_size: int = 128
    learning_rate: float = 1e-3
    weight_decay: float = 1e-3
    seed: int = 20261122
    # Members of a seed ensemble; their logits are averaged (stored as one wider hidden layer).
    # Five beat one on every public held-out figure, over three seeds (docs/DETECTION.md).
    ensemble: int = 5
    embeddings: bool = True
    hashed: bool = False
    # Extra weight per source: persona pairs are few and the hardest; domain pairs are ours.
    source_weights: dict[str, float] = field(
        default_factory=lambda: {PERSONA_SOURCE: 3.0, "domain": 5.0, SLOT_SOURCE: SLOT_WEIGHT}
    )
    folds: int = 5


# ---------------------------------------------------------------- data


def persona_pairs(dialogue_path: Path, embed: Embed) -> tuple[list[LabelledPair], dict[str, str]]:
    """One pair per DECODE dialogue: the last turn (b) against the same speaker's earlier turn most like it (a).

    The file does not say which earlier turn is contradicted; the most similar
    one is the likeliest, and choosing the same way for the non-contradicting
    dialogues keeps similarity from giving the label away.
    """
    dialogues = read_dialogues(dialogue_path)
    pairs, links = [], {}
    for d in dialogues:
        vectors = embed([d.last, *d.speaker_turns])
        best = int(np.argmax(vectors[1:] @ vectors[0]))
        pair_id = f"{PERSONA_SOURCE}-{d.id}"
        pairs.append(
            LabelledPair(
                id=pair_id,
                a=d.speaker_turns[best],
                b=d.last,
                label="contradiction" if d.is_contradiction else "compatible",
                source=PERSONA_SOURCE,
            )
        )
        links[pair_id] = "conversation:" + d.group
    # Truncations of one dialogue can yield the same pair twice; keep the first.
    seen: set[tuple[str, str]] = set()
    unique = []
    for p in pairs:
        if (p.a, p.b) not in seen:
            seen.add((p.a, p.b))
            unique.append(p)
    return unique, links


def training_pairs(
    pairs_path: Path,
    dialogue_path: Path | None,
    domain_path: Path | None,
    embed: Embed,
    slots_path: Path | None = None,
) -> tuple[list[LabelledPair], list[str]]:
    """All training pairs in a fixed order, with a leakage-safe group for each."""
    pairs = read_pairs(pairs_path)
    links: dict[str, str] = {}
    if dialogue_path is not None:
        persona, links = persona_pairs(dialogue_path, embed)
        pairs += persona
    if domain_path is not None:
        pairs += read_pairs(domain_path)
    if slots_path is not None:
        pairs += read_pairs(slots_path)
    return pairs, group_ids(pairs, links)


def featurise(
    pairs: list[LabelledPair], embed: Embed, *, embeddings: bool = True, hashed: bool = True
) -> tuple[NDArray[np.float32], list[rules.RuleSignals]]:
    a = [p.a for p in pairs]
    b = [p.b for p in pairs]
    ua, ub = embed(a), embed(b)
    signals = [rules.analyse(p.a, p.b, p.a_time, p.b_time) for p in pairs]
    return build_matrix(a, b, signals, ua, ub, embeddings=embeddings, hashed=hashed), signals


# ---------------------------------------------------------------- model


def fit(x: NDArray[np.float32], y: NDArray[np.int64], weights: NDArray[np.float32], config: TrainConfig) -> Model:
    """Mini-batch Adam on weighted cross-entropy; the same inputs give the same model.

    With ``config.ensemble`` > 1 (and a hidden layer), that many networks are
    trained from consecutive seeds and their logits averaged. Averaged logits
    of one-hidden-layer networks are one wider network — hidden layers side by
    side, output weights divided by the member count — so the ensemble is
    stored and run as a single model.
    """
    mean = x.mean(axis=0).astype(np.float32)
    scale = x.std(axis=0).astype(np.float32)
    scale[scale < 1e-6] = 1.0
    xs = ((x - mean) / scale).astype(np.float32)
    members = config.ensemble if config.hidden else 1
    trained = [_fit_network(xs, y, weights, config, seed=config.seed + m) for m in range(members)]
    if not config.hidden:
        w1, b1 = trained[0]
        return Model(mean, scale, w1, b1, None, None)
    return Model(
        mean,
        scale,
        np.concatenate([p[0] for p in trained], axis=1),
        np.concatenate([p[1] for p in trained]),
        (np.concatenate([p[2] for p in trained], axis=0) / members).astype(np.float32),
        (np.mean([p[3] for p in trained], axis=0)).astype(np.float32),
    )


def _fit_network(
    xs: NDArray[np.float32], y: NDArray[np.int64], weights: NDArray[np.float32], config: TrainConfig, *, seed: int
) -> list[NDArray[np.float32]]:
    """One network on standardised inputs: ``[w1, b1, w2, b2]``, or ``[w, b]`` without a hidden layer."""
    rng = np.random.default_rng(seed)
    n, d = xs.shape
    k = len(LABELS)
    if config.hidden:
        params = [
            (rng.standard_normal((d, config.hidden)) * np.sqrt(2.0 / d)).astype(np.float32),
            np.zeros(config.hidden, dtype=np.float32),
            (rng.standard_normal((config.hidden, k)) * np.sqrt(1.0 / config.hidden)).astype(np.float32),
            np.zeros(k, dtype=np.float32),
        ]
    else:
        params = [np.zeros((d, k), dtype=np.float32), np.zeros(k, dtype=np.float32)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    onehot = np.eye(k, dtype=np.float32)[y]
    w = (weights / weights.mean()).astype(np.float32)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    step = 0
    for _epoch in range(config.epochs):
        order = rng.permutation(n)
        for start in range(0, n, config.batch_size):
            idx = order[start : start + config.batch_size]
            xb, tb, wb = xs[idx], onehot[idx], w[idx, None]
            if config.hidden:
                pre = xb @ params[0] + params[1]
                hid = np.maximum(pre, 0.0)
                probs = softmax(hid @ params[2] + params[3])
                g_out = (probs - tb) * wb / len(idx)
                g_w2 = hid.T @ g_out
                g_b2 = g_out.sum(axis=0)
                g_hid = (g_out @ params[2].T) * (pre > 0)
                grads = [xb.T @ g_hid, g_hid.sum(axis=0), g_w2, g_b2]
            else:
                probs = softmax(xb @ params[0] + params[1])
                g_out = (probs - tb) * wb / len(idx)
                grads = [xb.T @ g_out, g_out.sum(axis=0)]
            step += 1
            lr = config.learning_rate * np.sqrt(1 - beta2**step) / (1 - beta1**step)
            for i, g in enumerate(grads):
                if params[i].ndim == 2:
                    g = g + config.weight_decay * params[i]
                m[i] = beta1 * m[i] + (1 - beta1) * g
                v[i] = beta2 * v[i] + (1 - beta2) * g * g
                params[i] = (params[i] - lr * m[i] / (np.sqrt(v[i]) + eps)).astype(np.float32)
    return params


def fit_temperature(logits: NDArray[np.float32], y: NDArray[np.int64]) -> float:
    """The temperature minimising held-out log-loss (a 1-d grid search, then a finer one)."""

    def nll(t: float) -> float:
        p = softmax(logits / t)
        return float(-np.mean(np.log(np.clip(p[np.arange(len(y)), y], 1e-12, None))))

    grid = np.exp(np.linspace(np.log(0.25), np.log(8.0), 61))
    best = min(grid, key=nll)
    fine = np.linspace(best * 0.9, best * 1.1, 41)
    return float(min(fine, key=nll))


def _label_f1(pred: NDArray[np.int64], y: NDArray[np.int64], k: int) -> float:
    hits = float(np.sum((pred == k) & (y == k)))
    denom = float(np.sum(pred == k) + np.sum(y == k))
    return 2 * hits / denom if denom else 0.0


def _f1_objective(pred: NDArray[np.int64], y: NDArray[np.int64]) -> float:
    # every label but compatible
    return sum(_label_f1(pred, y, k) for k in range(1, len(LABELS))) / (len(LABELS) - 1)


def tune_bias(log_probs: NDArray[np.float32], y: NDArray[np.int64]) -> NDArray[np.float32]:
    """Per-label offsets on log-probabilities that maximise the mean F1 of the three conflict labels.

    Argmax of a model trained on cross-entropy is not F1-optimal when the
    labels are unbalanced; a few coordinate-search passes fix the operating point.
    """
    bias = np.zeros(len(LABELS), dtype=np.float32)
    grid = np.round(np.arange(-2.0, 2.01, 0.1), 2)
    best = _f1_objective(np.argmax(log_probs + bias, axis=1), y)
    for _pass in range(3):
        for k in range(1, len(LABELS)):
            for value in grid:
                trial = bias.copy()
                trial[k] = value
                got = _f1_objective(np.argmax(log_probs + trial, axis=1), y)
                if got > best + 1e-9:
                    best, bias = got, trial
    return bias


CONTRADICTION = LABELS.index("contradiction")


def tune_long_bias(
    log_probs: NDArray[np.float32], y: NDArray[np.int64], bias: NDArray[np.float32], long: NDArray[np.bool_]
) -> NDArray[np.float32]:
    """The contradiction offset for long pairs (``network.LONG_PAIR_WORDS``) that maximises their contradiction F1.

    On top of the label offsets ``bias``. Long pairs are documents against a claim
    (adversarial NLI), a regime of their own: the offsets that suit two facts call
    too few of them contradictions. Zero when no long pair is labelled.
    """
    offset = np.zeros(len(LABELS), dtype=np.float32)
    if not long.any():
        return offset
    rows, gold = log_probs[long] + bias, y[long]

    def f1(delta: float) -> float:
        shifted = rows.copy()
        shifted[:, CONTRADICTION] += delta
        return _label_f1(np.argmax(shifted, axis=1), gold, CONTRADICTION)

    best = max(np.round(np.arange(-1.0, 3.01, 0.25), 2), key=lambda d: (f1(float(d)), -abs(float(d))))
    offset[CONTRADICTION] = float(best)
    return offset


def sample_weights(pairs: list[LabelledPair], config: TrainConfig) -> NDArray[np.float32]:
    return np.array([config.source_weights.get(p.source, 1.0) for p in pairs], dtype=np.float32)


def labels_of(pairs: list[LabelledPair]) -> NDArray[np.int64]:
    return np.array([LABELS.index(p.label) for p in pairs], dtype=np.int64)


def decide(probs: NDArray[np.float32], signals: list[rules.RuleSignals]) -> list[tuple[Relation, str | None]]:
    """Relation and current side for each row: the most probable label; a change's newer side from the rules."""
    out: list[tuple[Relation, str | None]] = []
    for row, s in zip(apply_rules(probs, signals), signals, strict=True):
        relation = RELATION_OF_LABEL[LABELS[int(np.argmax(row))]]
        current = (s.newer or "b") if relation == Relation.TEMPORAL_CHANGE else None
        out.append((relation, current))
    return out


def expected_calibration_error(probs: NDArray[np.float32], y: NDArray[np.int64], bins: int = 10) -> float:
    confidence = probs.max(axis=1)
    correct = probs.argmax(axis=1) == y
    edges = np.linspace(0.0, 1.0, bins + 1)
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        inside = (confidence > lo) & (confidence <= hi)
        if inside.any():
            total += float(inside.mean()) * abs(float(correct[inside].mean()) - float(confidence[inside].mean()))
    return total


@dataclass
class CrossValidation:
    report: dict[str, Any]
    temperature: float
    bias: NDArray[np.float32]
    long_bias: NDArray[np.float32]


@dataclass
class OutOfFold:
    """Every pair's probabilities from a network that never saw its fold (offsets tuned on the other folds too)."""

    probs: NDArray[np.float32]
    log_probs: NDArray[np.float32]  # temperature-scaled, before the label offsets
    temperature: float
    folds: NDArray[np.int64]
    long: NDArray[np.bool_]  # long pairs (network.LONG_PAIR_WORDS), with an offset of their own


def out_of_fold(
    x: NDArray[np.float32],
    pairs: list[LabelledPair],
    groups: list[str],
    config: TrainConfig,
    *,
    log: Callable[[str], None] = print,
) -> OutOfFold:
    """Grouped k-fold: out-of-fold logits for every pair, then a temperature and nested label offsets."""
    y = labels_of(pairs)
    w = sample_weights(pairs, config)
    folds = np.array([fold_of(g, config.folds) for g in groups])
    oof = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)
    for f in range(config.folds):
        test = folds == f
        started = time.perf_counter()
        model = fit(x[~test], y[~test], w[~test], config)
        oof[test] = model.logits(x[test])
        log(f"fold {f + 1}/{config.folds}: {int(test.sum())} held out, {time.perf_counter() - started:.0f}s")
    temperature = fit_temperature(oof, y)
    log_probs = np.log(np.clip(softmax(oof / temperature), 1e-12, None))
    long = long_pairs([p.a for p in pairs], [p.b for p in pairs])
    adjusted = log_probs.copy()
    for f in range(config.folds):
        test, rest = folds == f, folds != f
        bias = tune_bias(log_probs[rest], y[rest])
        adjusted[test] += bias
        adjusted[test & long] += tune_long_bias(log_probs[rest], y[rest], bias, long[rest])
    return OutOfFold(probs=softmax(adjusted), log_probs=log_probs, temperature=temperature, folds=folds, long=long)


def held_out_report(
    probs: NDArray[np.float32], pairs: list[LabelledPair], signals: list[rules.RuleSignals], temperature: float
) -> dict[str, Any]:
    """Scores of out-of-fold probabilities, per source and overall, with their calibration."""
    y = labels_of(pairs)
    decided = decide(probs, signals)
    items = [
        Scored(gold=p.label, source=p.source, relation=rel, current=cur)
        for p, (rel, cur) in zip(pairs, decided, strict=True)
    ]
    report = score(items, pairs_per_second=0.0)
    del report["pairs_per_second"]
    # The public sources alone (not ours): the mix the README's held-out check is made of.
    report["overall_without_domain"] = score([i for i in items if i.source not in OURS], pairs_per_second=0.0)[
        "overall"
    ]
    report["calibration"] = {
        "temperature": round(temperature, 4),
        "log_loss": round(float(-np.mean(np.log(np.clip(probs[np.arange(len(y)), y], 1e-12, None)))), 4),
        "expected_calibration_error": round(expected_calibration_error(probs, y), 4),
    }
    return report


def cross_validate(
    x: NDArray[np.float32],
    pairs: list[LabelledPair],
    groups: list[str],
    signals: list[rules.RuleSignals],
    config: TrainConfig,
    *,
    log: Callable[[str], None] = print,
) -> CrossValidation:
    """Held-out figures, and the temperature and label offsets to ship.

    The reported figures are nested: each fold is scored with offsets tuned on
    the other folds only, so nothing is scored by a knob that saw it.
    """
    oof = out_of_fold(x, pairs, groups, config, log=log)
    y = labels_of(pairs)
    bias = tune_bias(oof.log_probs, y)
    return CrossValidation(
        report=held_out_report(oof.probs, pairs, signals, oof.temperature),
        temperature=oof.temperature,
        bias=bias,
        long_bias=tune_long_bias(oof.log_probs, y, bias, oof.long),
    )


# ---------------------------------------------------------------- shipping


def files_digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def train(
    *,
    pairs_path: Path,
    dialogue_path: Path | None,
    domain_path: Path | None,
    out_path: Path,
    embed: Embed,
    embedder: str,
    config: TrainConfig,
    cross_validation: bool = True,
    log: Callable[[str], None] = print,
    slots_path: Path | None = None,
) -> dict[str, Any]:
    """Cross-validate (for honest figures and the temperature), then fit on everything and save."""
    pairs, groups = training_pairs(pairs_path, dialogue_path, domain_path, embed, slots_path)
    log(f"{len(pairs)} training pairs")
    x, signals = featurise(pairs, embed, embeddings=config.embeddings, hashed=config.hashed)
    y = labels_of(pairs)
    held_out: dict[str, Any] = {}
    temperature, bias = 1.0, np.zeros(len(LABELS), dtype=np.float32)
    long_bias = np.zeros(len(LABELS), dtype=np.float32)
    if cross_validation:
        cv = cross_validate(x, pairs, groups, signals, config, log=log)
        held_out, temperature, bias, long_bias = cv.report, cv.temperature, cv.bias, cv.long_bias
    model = fit(x, y, sample_weights(pairs, config), config)
    model.temperature = temperature
    model.bias = bias
    model.long_bias = long_bias
    inputs = [p for p in (pairs_path, dialogue_path, domain_path, slots_path) if p is not None]
    counts: dict[str, dict[str, int]] = {}
    for p in pairs:
        counts.setdefault(p.source, {}).setdefault(p.label, 0)
        counts[p.source][p.label] += 1
    metadata = {
        "labels": list(LABELS),
        "feature_dim": feature_dim(embeddings=config.embeddings, hashed=config.hashed),
        "dense_features": list(DENSE_NAMES),
        "hashed_dim": HASHED_DIM if config.hashed else 0,
        "config": asdict(config),
        "temperature": temperature,
        "label_bias": [round(float(b), 4) for b in bias],
        "long_pair_bias": [round(float(b), 4) for b in long_bias],
        "training_data": {"files": [str(p.name) for p in inputs], "sha256": files_digest(inputs), "counts": counts},
        "held_out": held_out,
        "embedder": embedder,
    }
    save_model(model, out_path, metadata)
    return metadata
