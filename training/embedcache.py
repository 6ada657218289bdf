"""A disk cache of embeddings for training texts, keyed by the text's hash.

Training embeds tens of thousands of sentences; the cache under ``var/cache/``
makes a re-run of ``train_detector`` take seconds instead of minutes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray


def _text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()


class EmbeddingCache:
    """Call it like ``embed_texts``; texts it has not seen are embedded once and written back."""

    def __init__(self, path: Path, embed: Callable[[list[str]], NDArray[np.float32]]) -> None:
        self.path = path
        self._embed = embed
        self._index: dict[str, int] = {}
        self._rows: list[NDArray[np.float32]] = []
        if path.exists():
            with np.load(path, allow_pickle=False) as stored:
                matrix = stored["vectors"].astype(np.float32)
                for i, key in enumerate(stored["keys"]):
                    self._index[str(key)] = i
                self._rows = list(matrix)
        self._dirty = False

    def __call__(self, texts: list[str]) -> NDArray[np.float32]:
        keys = [_text_key(t) for t in texts]
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in self._index and key not in missing:
                missing[key] = text
        if missing:
            vectors = self._embed(list(missing.values()))
            for key, vector in zip(missing, vectors, strict=True):
                self._index[key] = len(self._rows)
                self._rows.append(vector.astype(np.float32))
            self._dirty = True
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        out: NDArray[np.float32] = np.stack([self._rows[self._index[k]] for k in keys]).astype(np.float32)
        return out

    def save(self) -> None:
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self._index, key=self._index.__getitem__)
        tmp = self.path.with_name(self.path.stem + ".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vectors=np.stack(self._rows))
        tmp.replace(self.path)
        self._dirty = False
