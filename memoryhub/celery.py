from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

from celery import Celery, Task, shared_task
from celery.signals import worker_init, worker_process_init
from django.conf import settings
from kombu.transport import sqlalchemy as sql_transport

from memoryhub.warmup import WORKER, warm

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

app = Celery("memoryhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _poll_promptly(**kwargs: object) -> None:
    """The embedded broker's worker sleeps MEMORYHUB_BROKER_POLL_SECONDS between polls, not kombu's 1 s.

    Set on the class: the SQL transport hands every transport option to SQLAlchemy's
    ``create_engine``, which refuses ``polling_interval``.
    """
    sql_transport.Transport.polling_interval = settings.MEMORYHUB_BROKER_POLL_SECONDS


@worker_process_init.connect
def _load_models(**kwargs: object) -> None:
    """Each worker process loads the models before it takes its first task.

    ``run_hub`` waits for the file named by ``MEMORYHUB_WORKER_READY_FILE`` before it says the hub is up.
    """
    if settings.MEMORYHUB_WARM_MODELS:
        warm(WORKER)
    if ready_file := os.environ.get("MEMORYHUB_WORKER_READY_FILE"):
        Path(ready_file).touch()


P = ParamSpec("P")
R = TypeVar("R")


def idempotent_task(fn: Callable[P, R]) -> Task[P, R]:
    """A task that is safe to run twice (it claims its work with a conditional UPDATE).

    Acknowledged after the work, redelivered if a worker dies, retried with
    exponential backoff and jitter on any error.
    """
    return shared_task(
        acks_late=True,
        reject_on_worker_lost=True,
        autoretry_for=(Exception,),
        retry_backoff=2,
        retry_backoff_max=300,
        retry_jitter=True,
        max_retries=10,
    )(fn)
