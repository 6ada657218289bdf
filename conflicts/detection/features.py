"""The classifier's input vector for a pair: embeddings, rule signals and hashed word features.

Shared by training and inference so the two can never drift apart. Hashing
uses CRC-32, which is stable across processes (Python's ``hash`` is salted).
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

import numpy as np

from conflicts.detection.rules import FEATURE_NAMES, NEGATORS, STOPWORDS, RuleSignals, tokens

if TYPE_CHECKING:
    from numpy.typing import NDArray

EMBED_DIM = 384
# Hashed buckets: words only in a, words only in b, shared words, and (a-word, b-word) pairs.
A_ONLY, B_ONLY, SHARED, CROSS = 1024, 1024, 512, 2048
HASHED_DIM = A_ONLY + B_ONLY + SHARED + CROSS
MAX_CROSS_WORDS = 12
DENSE_NAMES = (
    *FEATURE_NAMES,
    "cosine",
    "cosine_sq",
    "cosine_x_one_negated",
    "cosine_x_opposites",
    "cosine_x_has_times",
)


def feature_dim(*, embeddings: bool = True, hashed: bool = True) -> int:
    return (4 * EMBED_DIM if embeddings else 0) + len(DENSE_NAMES) + (HASHED_DIM if hashed else 0)


def _bucket(key: str, size: int) -> int:
    return zlib.crc32(key.encode("utf-8")) % size


def _lexical_words(text: str) -> list[str]:
    # Negators and a few function words carry polarity, so they stay; other stopwords go.
    return [w for w in tokens(text) if w in NEGATORS or w not in STOPWORDS or w in ("no", "not", "never")]


def hashed_row(a_text: str, b_text: str, out: NDArray[np.float32]) -> None:
    """Write the hashed word features of one pair into ``out`` (zeroed, length ``HASHED_DIM``)."""
    wa, wb = set(_lexical_words(a_text)), set(_lexical_words(b_text))
    only_a, only_b, shared = sorted(wa - wb), sorted(wb - wa), sorted(wa & wb)
    for w in only_a:
        out[_bucket("a:" + w, A_ONLY)] = 1.0
    for w in only_b:
        out[A_ONLY + _bucket("b:" + w, B_ONLY)] = 1.0
    for w in shared:
        out[A_ONLY + B_ONLY + _bucket("s:" + w, SHARED)] = 1.0
    base = A_ONLY + B_ONLY + SHARED
    # Cross pairs are order-free (a contradiction is symmetric); long texts keep their rarest-looking words.
    xs = sorted(only_a, key=lambda w: (-len(w), w))[:MAX_CROSS_WORDS]
    ys = sorted(only_b, key=lambda w: (-len(w), w))[:MAX_CROSS_WORDS]
    for x in xs:
        for y in ys:
            lo, hi = (x, y) if x < y else (y, x)
            out[base + _bucket(lo + "|" + hi, CROSS)] = 1.0


def dense_row(signals: RuleSignals, cosine: float) -> list[float]:
    one_negated = float((signals.negations_a > 0) != (signals.negations_b > 0))
    return [
        *signals.features(),
        cosine,
        cosine * cosine,
        cosine * one_negated,
        cosine * float(bool(signals.opposite_words)),
        cosine * float(signals.has_times),
    ]


def build_matrix(
    a_texts: list[str],
    b_texts: list[str],
    signals: list[RuleSignals],
    ua: NDArray[np.float32],
    ub: NDArray[np.float32],
    *,
    embeddings: bool = True,
    hashed: bool = True,
) -> NDArray[np.float32]:
    """One row per pair: ``[u, v, |u−v|, u∘v]`` · rule and cosine features · hashed word features."""
    n = len(a_texts)
    x = np.zeros((n, feature_dim(embeddings=embeddings, hashed=hashed)), dtype=np.float32)
    col = 0
    if embeddings:
        x[:, 0:EMBED_DIM] = ua
        x[:, EMBED_DIM : 2 * EMBED_DIM] = ub
        x[:, 2 * EMBED_DIM : 3 * EMBED_DIM] = np.abs(ua - ub)
        x[:, 3 * EMBED_DIM : 4 * EMBED_DIM] = ua * ub
        col = 4 * EMBED_DIM
    cosines = np.einsum("ij,ij->i", ua, ub)
    for i in range(n):
        x[i, col : col + len(DENSE_NAMES)] = dense_row(signals[i], float(cosines[i]))
    col += len(DENSE_NAMES)
    if hashed:
        for i in range(n):
            hashed_row(a_texts[i], b_texts[i], x[i, col : col + HASHED_DIM])
    return x
