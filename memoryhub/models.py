from __future__ import annotations

from django.db import models


class Drain(models.Model):
    """One row per background queue that a single task drains in batches (``memoryhub/drains.py``).

    ``queued_at`` is set while a drain message waits in the broker, so a burst of
    commits sends one message, not one per fact; the task clears it when it
    starts (work arriving from then on needs a drain after this one) and keeps
    ``running_since`` set while it works, so the sweeps can tell an idle queue
    from a busy one.
    """

    name = models.CharField(max_length=40, primary_key=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    running_since = models.DateTimeField(null=True, blank=True)
    last_finished_at = models.DateTimeField(null=True, blank=True)
    messages_sent = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return self.name


class CircuitBreaker(models.Model):
    """The shared state of one remote dependency's circuit breaker (``memoryhub/llm.py``).

    In the database, not in memory: every web and worker process must see the
    same count of consecutive failures and the same pause, or each would keep
    calling a dead endpoint until it had failed on its own.
    """

    name = models.CharField(max_length=40, primary_key=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    # Set while the breaker is open: nobody calls before then; the first caller after it probes.
    open_until = models.DateTimeField(null=True, blank=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    last_failure_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")

    def __str__(self) -> str:
        return self.name
