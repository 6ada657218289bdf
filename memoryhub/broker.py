"""The embedded broker's tables: how deep the queues are, and pruning what was delivered.

kombu's SQLAlchemy transport marks a delivered message ``visible = false`` and
never deletes it (an unacknowledged message lives in the worker's memory and is
put back as a new row if the worker shuts down), so its table would only grow.
:func:`broker_prune` deletes delivered rows; the drains call it when they empty
their queue and a beat job every minute. With Redis or RabbitMQ (``CELERY_BROKER_URL``)
both functions have nothing to do and say so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func

from memoryhub.celery import app

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BrokerDepth:
    waiting: dict[str, int]  # messages not yet delivered, by queue
    delivered: int  # delivered rows not yet pruned


def _sql_channel(connection: Any) -> Any | None:
    channel = connection.default_channel
    return channel if hasattr(channel, "message_cls") and hasattr(channel, "session") else None


def broker_depth() -> BrokerDepth | None:
    """Row counts of the SQL broker's message table; None for another broker."""
    with app.connection_for_read() as connection:
        channel = _sql_channel(connection)
        if channel is None:
            return None
        message, queue = channel.message_cls, channel.queue_cls
        try:
            rows = (
                channel.session.query(queue.name, func.count(message.id))
                .join(message, message.queue_id == queue.id)
                .filter(message.visible.is_(True))
                .group_by(queue.name)
            )
            waiting = {str(name): int(count) for name, count in rows}
            delivered = channel.session.query(message).filter(message.visible.is_(False)).count()
        finally:
            channel.session.commit()
        return BrokerDepth(waiting=waiting, delivered=delivered)


def broker_prune() -> int | None:
    """Delete delivered messages from the SQL broker; how many, or None for another broker."""
    with app.connection_for_write() as connection:
        channel = _sql_channel(connection)
        if channel is None:
            return None
        message = channel.message_cls
        try:
            deleted: int = (
                channel.session.query(message).filter(message.visible.is_(False)).delete(synchronize_session=False)
            )
            channel.session.commit()
        except Exception:
            channel.session.rollback()
            raise
        return deleted


def broker_prune_after_drain() -> None:
    """Prune once a drain emptied its queue; a failure only waits for the beat job."""
    try:
        broker_prune()
    except Exception:
        logger.warning("could not prune the broker's delivered messages; the beat job will", exc_info=True)
