from __future__ import annotations

import os
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from celery import Celery, Task, shared_task

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

app = Celery("memoryhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

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
