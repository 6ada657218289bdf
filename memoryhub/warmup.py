"""Loading models before the first request needs them.

An app registers what its processes should load once, at start (the embedder,
the subject reader's lexicon, the classifier, the cross-encoder), in
``AppConfig.ready()``, each for the processes that use it (web, worker or
both); the Celery worker loads its models when its process starts and each web
process in a background thread (``memoryhub/wsgi.py``), so start-up stays fast
and the first synchronous check answers within its time box.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

WEB = "web"
WORKER = "worker"
_loaders: dict[str, tuple[Callable[[], object], frozenset[str]]] = {}


def warm_on_start(name: str, load: Callable[[], object], *, processes: tuple[str, ...] = (WEB, WORKER)) -> None:
    """Register ``load`` for the processes that use the model (web, worker, or both)."""
    _loaders[name] = (load, frozenset(processes))


def warm(process: str | None = None) -> dict[str, float]:
    """Run the loaders registered for ``process`` (None: all); seconds each took. A failure is logged, not fatal."""
    took = {}
    for name, (load, processes) in list(_loaders.items()):
        if process is not None and process not in processes:
            continue
        started = time.monotonic()
        try:
            load()
        except Exception:
            logger.exception("could not load %s ahead of time; it loads on first use", name)
            continue
        took[name] = round(time.monotonic() - started, 3)
    if took:
        logger.info("models loaded: %s", ", ".join(f"{n} {s:.1f}s" for n, s in took.items()))
    return took


def warm_in_background(process: str) -> threading.Thread:
    thread = threading.Thread(target=warm, args=(process,), name="memoryhub-warmup", daemon=True)
    thread.start()
    return thread
