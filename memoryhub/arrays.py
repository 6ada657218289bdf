"""Reading the project's numpy weight files, one thread at a time.

numpy reads each array's header with ``ast.literal_eval``, and CPython 3.11 keeps one AST
recursion counter per interpreter: two threads parsing at once can fail with "SystemError: AST
constructor recursion depth mismatch" (CPython gh-106905; it failed this project's test collection
once). A web process loads its models in a background thread (``memoryhub.warmup``) while its first
requests may load them too, so every weight file is read under one process-wide lock.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

_LOCK = threading.Lock()


def load_npz(path: Path) -> dict[str, NDArray[Any]]:
    """Every array of an ``.npz`` file, read in full (no pickles): nothing is left to parse after it returns."""
    with _LOCK, np.load(path, allow_pickle=False) as stored:
        return {name: stored[name] for name in stored.files}


def load_npy(path: Path, *, mmap_mode: Literal["r"] | None = None) -> NDArray[Any]:
    """One ``.npy`` array (its header parsed here; its data memory-mapped with ``mmap_mode="r"``)."""
    with _LOCK:
        array: NDArray[Any] = np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
        return array
