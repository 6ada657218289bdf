"""Loading models before the first request needs them.

An app registers what its processes should load once, at start (the embedder,
the subject reader's lexicon, the classifier, the cross-encoder), in
``AppConfig.ready()``; the Celery worker loads everything when its process
starts and each web process in a background thread (``memoryhub/wsgi.py``), so
start-up stays fast and the first synchronous check answers within its time box.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

_loaders: dict[str, Callable[[], object]] = {}


def warm_on_start(name: str, load: Callable[[], object]) -> None:
    _loaders[name] = load


def warm() -> dict[str, float]:
    """Run every registered loader; seconds each took. A loader that fails is logged, not fatal."""
    took = {}
    for name, load in list(_loaders.items()):
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


def warm_in_background() -> threading.Thread:
    thread = threading.Thread(target=warm, name="memoryhub-warmup", daemon=True)
    thread.start()
    return thread
