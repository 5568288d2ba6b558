"""The broker's marker: how a sweeper notices, within one sweep, that the broker lost its messages.

A broker restarted without its data (Redis without persistence, a RabbitMQ that failed over to an
empty node) comes back empty, while the rows of every queued job say that a message is out. So each
Podium instance keeps a marker in its broker, beside its queues, and the marker's token in the
database (``BrokerMarker``, keyed by ``queue_prefix``):

- Redis: the key ``<prefix>podium-marker`` holds the token;
- RabbitMQ: a durable queue named ``<prefix>podium-marker-<token>`` exists (it holds no message).

Every sweep compares the two (one read of each). When they agree, nothing happened. When the broker
has no marker, it lost its data (or never had one: a new broker, a first start): the sweeper that
replaces the database's token by a new one (a compare-and-set, so exactly one sweeper of all the
processes wins) puts the new marker into the broker before it commits, counts a broker loss when
there was a token before, and its caller sends again every job queued before that instant. A Redis
marker that differs from the database's token belongs to a sweeper that is between those two steps
(or died there): the database takes the broker's token and nothing is sent.

Written by hand because no library keeps such a marker: it is a key or a queue and a token.
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.config import Settings
from app.services.jobs import counters
from app.storage.models.operations import BrokerMarker
from app.storage.types import utcnow
from app.worker.broker import declared_queues, is_redis

if TYPE_CHECKING:
    from celery import Celery

log = logging.getLogger(__name__)

MARKER = "podium-marker"


class Marker:
    """Reads and writes one instance's marker in its broker (see the module's docstring)."""

    def __init__(self, celery: Celery, settings: Settings) -> None:
        self.celery = celery
        self.settings = settings
        self.name = f"{settings.queue_prefix}{MARKER}"
        self.redis = is_redis(settings)

    def _connection(self) -> Any:
        connection = self.celery.connection_for_write()
        connection.ensure_connection(max_retries=1, interval_start=0, timeout=self.settings.broker_timeout_seconds)
        return connection

    def read(self, expected: str | None) -> str | None:
        """The broker's token: on Redis the key's value; on RabbitMQ ``expected`` when its queue exists."""
        with self._connection() as connection:
            if self.redis:
                value = connection.default_channel.client.get(self.name)
                return value.decode() if value is not None else None
            if expected is None:
                return None
            channel = connection.channel()
            try:  # a passive declare of a missing queue closes the channel: a channel of its own
                channel.queue_declare(queue=f"{self.name}-{expected}", passive=True)
                return expected
            except connection.channel_errors:
                return None
            finally:
                channel.close()

    def write(self, token: str, old: str | None) -> None:
        """Put ``token`` into the broker (and drop the marker of ``old``), and declare Podium's queues.

        A broker without its marker lost its queues too (on Redis, their bindings), while each sending
        process's client still counts them as declared (kombu declares an entity once per connection)
        and would route what is sent next nowhere: they are declared again before anything is sent."""
        with self._connection() as connection:
            for queue in declared_queues(self.settings):
                queue(connection.default_channel).declare()
            if self.redis:
                connection.default_channel.client.set(self.name, token)
                return
            channel = connection.channel()
            try:
                channel.queue_declare(queue=f"{self.name}-{token}", durable=True, auto_delete=False)
                if old is not None:
                    channel.queue_delete(queue=f"{self.name}-{old}")
            finally:
                channel.close()


def check(session: Session, marker: Marker) -> bool:
    """Compare the broker's marker with the database's token, repairing it where needed; ``True``
    when this call found the broker without its marker and renewed it after an earlier token, that
    is when its caller must send again what the broker held. The caller commits."""
    name = marker.settings.queue_prefix
    known = session.scalar(select(BrokerMarker.token).where(BrokerMarker.name == name))
    found = marker.read(known)
    if found is not None and found == known:
        return False
    if found is not None:  # another sweeper is between its two steps, or died there
        session.execute(
            update(BrokerMarker)
            .where(BrokerMarker.name == name, BrokerMarker.token == known)
            .values(token=found, updated_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        return False
    token = secrets.token_hex(16)
    if known is None:
        insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
        statement: Any = (
            insert(BrokerMarker).values(name=name, token=token, updated_at=utcnow()).on_conflict_do_nothing()
        )
    else:
        statement = (
            update(BrokerMarker)
            .where(BrokerMarker.name == name, BrokerMarker.token == known)
            .values(token=token, updated_at=utcnow())
        )
    if session.scalar(statement.returning(BrokerMarker.name)) is None:  # another sweeper won
        return False
    # The broker first, then the commit: a sweeper that reads the new token from the database also
    # finds it in the broker.
    marker.write(token, known)
    if known is None:
        return False
    counters.bump(session, counters.BROKER_LOSSES)
    log.warning("the broker lost its messages (its marker is gone): every queued job is sent again")
    return True
