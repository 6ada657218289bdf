"""The cross-encoder experiment's network and training loop: torch, onnx and tokenizers only, no Django.

``bench/cross_encoder.py`` (the experiment) imports it; so does a GPU machine, which has PyTorch but
not this project's environment:

    python3 bench/cross_encoder_model.py PAIRS.json MODEL.onnx OUT_DIR [--config e3-lr3e-05 ...]

reads the pairs and folds ``bench/cross_encoder.py --export PAIRS.json`` wrote, fine-tunes one
cross-encoder per fold for each configuration (``e<epochs>-lr<rate>``) and writes each
configuration's out-of-fold scores to ``OUT_DIR/cross-encoder-oof-<config>.npz``, which
``bench/cross_encoder.py --scores FILE`` then blends and scores.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray

# Deterministic cuBLAS (torch.use_deterministic_algorithms) needs this before CUDA starts.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
ASSETS_DIR = Path(__file__).resolve().parent.parent / "memories" / "embedding_assets"
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


def _tensors(encoded: dict[str, NDArray[np.int64]], device: str = "cpu") -> tuple[Any, Any, Any]:
    import torch

    return tuple(torch.from_numpy(encoded[k]).to(device) for k in ("input_ids", "attention_mask", "token_type_ids"))


# ---------------------------------------------------------------- training


class TrainingPair(Protocol):
    @property
    def a(self) -> str: ...
    @property
    def b(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def source(self) -> str: ...


@dataclass(frozen=True)
class ExportedPair:
    """A training pair as ``--export`` writes it: enough to fine-tune without the project."""

    id: str
    a: str
    b: str
    label: str
    source: str
    fold: int


@dataclass(frozen=True)
class Recipe:
    """How one cross-encoder is fine-tuned; ``name`` keys its cached scores."""

    epochs: int = 3
    rate: float = 3e-5
    seed: int = 20261122

    @property
    def name(self) -> str:
        return f"e{self.epochs}-lr{self.rate:g}"

    @classmethod
    def parse(cls, name: str, seed: int = 20261122) -> Recipe:
        epochs, rate = name.split("-lr")
        return cls(epochs=int(epochs.removeprefix("e")), rate=float(rate), seed=seed)


def fine_tune(
    weights: dict[str, NDArray[np.float32]], pairs: Sequence[TrainingPair], recipe: Recipe, device: str = "cpu"
) -> Any:
    """AdamW (weight decay 0.01), 10 % linear warm-up then linear decay, batches of 16 similar lengths."""
    import torch

    torch.manual_seed(recipe.seed)
    model = network(weights).to(device)
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(
        [
            {"params": [p for p in trainable if p.ndim == 2], "weight_decay": 0.01},
            {"params": [p for p in trainable if p.ndim != 2], "weight_decay": 0.0},
        ],
        lr=recipe.rate,
    )
    rng = np.random.default_rng(recipe.seed)
    total = math.ceil(len(pairs) / 16) * recipe.epochs
    warmup = max(1, total // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))
    )
    targets = torch.tensor([1.0 if p.label == "duplicate" else 0.0 for p in pairs], device=device)
    for epoch in range(recipe.epochs):
        started, running = time.perf_counter(), 0.0
        for idx in _length_bucketed_batches(pairs, rng):
            inputs = _tensors(encode([(pairs[i].a, pairs[i].b) for i in idx]), device)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(*inputs), targets[idx])
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimiser.step()
            scheduler.step()
            running += loss.item() * len(idx)
        elapsed = time.perf_counter() - started
        print(f"  epoch {epoch + 1}/{recipe.epochs}: loss {running / len(pairs):.4f}, {elapsed:.0f}s", flush=True)
    model.eval()
    return model


def _length_bucketed_batches(pairs: Sequence[TrainingPair], rng: np.random.Generator) -> list[NDArray[np.int64]]:
    """A random order cut into runs of 50 batches, each run sorted by length, the batches shuffled."""
    order, span, batches = rng.permutation(len(pairs)), 16 * 50, []
    for start in range(0, len(order), span):
        run = sorted(order[start : start + span], key=lambda i: len(pairs[i].a) + len(pairs[i].b))
        batches += [np.array(run[s : s + 16]) for s in range(0, len(run), 16)]
    return [batches[i] for i in rng.permutation(len(batches))]


def score_with(model: Any, pairs: list[tuple[str, str]], device: str = "cpu") -> NDArray[np.float32]:
    import torch

    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    out = np.zeros(len(pairs), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, len(order), 32):
            idx = order[start : start + 32]
            logits = model(*_tensors(encode([pairs[i] for i in idx]), device))
            out[idx] = torch.sigmoid(logits).cpu().numpy()
    return out


def out_of_fold_scores(
    pairs: Sequence[TrainingPair], folds: NDArray[np.int64], model_path: Path, recipe: Recipe, device: str = "cpu"
) -> NDArray[np.float32]:
    """Each pair scored by a cross-encoder fine-tuned on the other folds' pairs from ``TRAINED_SOURCES``."""
    weights = packaged_weights(model_path)
    scores = np.zeros(len(pairs), dtype=np.float32)
    for f in range(int(folds.max()) + 1):
        train = [p for p, g in zip(pairs, folds, strict=True) if g != f and p.source in TRAINED_SOURCES]
        print(f"cross-encoder {recipe.name}, fold {f + 1}: {len(train)} training pairs", flush=True)
        model = fine_tune(weights, train, recipe, device)
        held = np.flatnonzero(folds == f)
        scores[held] = score_with(model, [(pairs[i].a, pairs[i].b) for i in held.tolist()], device)
    return scores


def scores_file(directory: Path, recipe: Recipe) -> Path:
    return directory / f"cross-encoder-oof-{recipe.name}.npz"


def read_export(path: Path) -> list[ExportedPair]:
    return [ExportedPair(**row) for row in json.loads(path.read_text(encoding="utf-8"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pairs", type=Path, help="the file bench/cross_encoder.py --export wrote")
    parser.add_argument("model", type=Path, help="the packaged all-MiniLM-L6-v2 int8 ONNX file")
    parser.add_argument("out", type=Path)
    parser.add_argument("--config", nargs="+", default=["e3-lr3e-05"], help="recipes: e<epochs>-lr<rate>")
    args = parser.parse_args()
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    pairs = read_export(args.pairs)
    folds = np.array([p.fold for p in pairs], dtype=np.int64)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"{len(pairs)} pairs, {int(folds.max()) + 1} folds, on {device}", flush=True)
    for name in args.config:
        recipe, started = Recipe.parse(name), time.perf_counter()
        scores = out_of_fold_scores(pairs, folds, args.model, recipe, device)
        np.savez_compressed(scores_file(args.out, recipe), ids=np.array([p.id for p in pairs]), scores=scores)
        print(f"{recipe.name}: {time.perf_counter() - started:.0f}s", flush=True)


if __name__ == "__main__":
    main()
