"""Messages stranded on a dead worker: how a sweeper finds, on Redis, the jobs whose message a worker
took and never claimed.

A worker acknowledges a message only when its job ended (``app.worker.broker``), and a job's first
step claims its row (``running``, with a lease), in a transaction that also reads the submitted
file. A worker killed between taking the message and committing that claim (for a large upload,
the whole time the file is read) leaves the row ``queued`` and its message unacknowledged. RabbitMQ
puts such a message back when the dead worker's connection drops; kombu's Redis transport keeps it
in its ``unacked`` hash and puts it back only after its visibility timeout (an hour by default),
and no lease covers the row. So a sweeper reads that hash: a message of Podium's queues delivered
longer than a lease ago whose row is still ``queued`` belongs to a worker that died (a live one
would have claimed it by then), and the sweeper sends the job again, ahead of fresh ones, within a
lease and a sweep of the delivery, like a job whose lease expired. The stale entry is dropped once
the job was sent again. A message only wakes a worker, which claims the fairest waiting row (not
always the one its message names), so a dead worker's message may name a row that another message
claimed since: then some other row waits on a message that will never come, and the sweeper sends
a wake-up in its place. A worker that was only slow (its claim took longer than a lease) costs a
duplicate message, which claiming turns into a no-op.

Written by hand because kombu offers only the visibility timeout, which would also send again the
message of every job running longer than it; here only the rows still waiting are taken.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.config import Settings
from app.services.jobs.kinds import QUEUES
from app.worker.broker import TASK_NAME, is_redis, queue_name

if TYPE_CHECKING:
    from celery import Celery


@dataclass(frozen=True)
class Delivery:
    """One message delivered to a worker and not acknowledged: its tag in kombu's hash, its job, and
    when it was delivered (seconds since the epoch)."""

    tag: str
    job: str
    row_id: int
    at: float


class Unacked:
    """Reads and prunes kombu's hash of unacknowledged messages of one Redis broker (Podium's queues only)."""

    def __init__(self, celery: Celery, settings: Settings) -> None:
        self.celery = celery
        self.settings = settings
        self.queues = {queue_name(settings, queue) for queue in QUEUES}

    def _channel(self) -> Any:
        connection = self.celery.connection_for_write()
        connection.ensure_connection(max_retries=1, interval_start=0, timeout=self.settings.broker_timeout_seconds)
        return connection

    def older_than(self, seconds_ago: float) -> list[Delivery]:
        """The messages of Podium's queues delivered at least ``seconds_ago`` seconds ago and still
        not acknowledged."""
        with self._channel() as connection:
            channel = connection.default_channel
            client = channel.client
            # kombu stamps a delivery with the receiving worker's clock (its own restores compare so too).
            stamped = client.zrangebyscore(
                channel.unacked_index_key, "-inf", time.time() - seconds_ago, withscores=True
            )
            if not stamped:
                return []
            payloads = client.hmget(channel.unacked_key, [tag for tag, _ in stamped])
        found = []
        for (tag, at), payload in zip(stamped, payloads, strict=True):
            delivery = self._parse(tag, float(at), payload)
            if delivery is not None:
                found.append(delivery)
        return found

    def _parse(self, tag: bytes | str, at: float, payload: bytes | None) -> Delivery | None:
        if payload is None:  # acknowledged meanwhile
            return None
        try:
            message, _exchange, routing_key = json.loads(payload)
            if routing_key not in self.queues or message["headers"].get("task") != TASK_NAME:
                return None
            body = message["body"]
            if message["properties"].get("body_encoding") == "base64":
                body = base64.b64decode(body)
            args = json.loads(body)[0]  # Celery's message protocol 2: [args, kwargs, embed]
            job, row_id = str(args[0]), int(args[1])
        except (ValueError, KeyError, IndexError, TypeError):  # another program's message, or a hand-made one
            return None
        return Delivery(tag.decode() if isinstance(tag, bytes) else tag, job, row_id, at)

    def take(self, tags: list[str]) -> list[str]:
        """Forget these deliveries and return those this call removed: of several sweepers that found the same
        stale delivery, one takes it."""
        if not tags:
            return []
        with self._channel() as connection:
            channel = connection.default_channel
            with channel.client.pipeline() as pipe:
                for tag in tags:
                    pipe.hdel(channel.unacked_key, tag)
                pipe.zrem(channel.unacked_index_key, *tags)
                removed = pipe.execute()[:-1]
        return [tag for tag, gone in zip(tags, removed, strict=True) if gone]

    def drop(self, tags: list[str]) -> None:
        """Forget these deliveries: their jobs were sent again, so the broker must not put them back."""
        if not tags:
            return
        with self._channel() as connection:
            channel = connection.default_channel
            with channel.client.pipeline() as pipe:
                pipe.zrem(channel.unacked_index_key, *tags).hdel(channel.unacked_key, *tags).execute()


def for_broker(celery: Celery, settings: Settings) -> Unacked | None:
    """The reader for this broker, or ``None`` for RabbitMQ (it returns a dead worker's messages itself)."""
    return Unacked(celery, settings) if is_redis(settings) else None
