"""Weight files are read whole, under one lock (memoryhub/arrays.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from memoryhub import arrays


def test_an_npz_file_is_read_in_full(tmp_path: Path) -> None:
    path = tmp_path / "weights.npz"
    np.savez(path, w=np.arange(6, dtype=np.float32).reshape(2, 3), labels=np.array(["a", "b"]))

    stored = arrays.load_npz(path)
    path.unlink()  # nothing is read from the file after load_npz returns

    assert stored["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert tuple(stored["labels"]) == ("a", "b")


def test_a_file_is_not_read_while_another_thread_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "table.npy"
    np.save(path, np.ones((2, 2), dtype=np.uint8))
    done = threading.Event()

    def load() -> None:
        arrays.load_npy(path, mmap_mode="r")
        done.set()

    with arrays._LOCK:
        reader = threading.Thread(target=load)
        reader.start()
        assert not done.wait(0.3)  # numpy's header parse waits for the lock
    reader.join(5)
    assert done.is_set()
