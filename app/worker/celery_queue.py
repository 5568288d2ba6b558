"""``CeleryQueue``: the ``JobQueue`` of the distributed mode, and the web tier's view of the broker.

A job is sent after its transaction committed (``app.services.jobs.enqueue``). Its row's
``enqueued_at`` is stamped in that same transaction, so the row itself says a message is out and
no sweeper sends it too, at no extra transaction; if the broker then refuses the message the stamp is
cleared, and the sweeper sends the job as soon as the broker is back. (Stamping after a successful
send would cost a second transaction per upload; the price of stamping first is that a process
dying between its commit and its send delays that job by ``requeue_after_seconds``.)

A send never raises and never waits long: while the broker is down an upload is still accepted
and stored ``queued``. After a failed send, requests do not try the broker again for
``sweep_seconds`` (the sweeper keeps trying), so an outage costs them no time at all.
"""

from __future__ import annotations

import logging
import threading
import time

from celery import Celery
from sqlalchemy.exc import SQLAlchemyError

from app.config import Settings
from app.services.jobs import dispatch
from app.services.jobs.kinds import QUEUES, JobKind
from app.storage.db import Database
from app.worker.broker import TASK_NAME, queue_name

log = logging.getLogger(__name__)


class CeleryQueue:
    """Sends jobs to their Celery queue; also answers the web tier's questions about the broker."""

    def __init__(self, celery: Celery, db: Database, settings: Settings) -> None:
        self.celery = celery
        self.db = db
        self.settings = settings
        self._lock = threading.Lock()
        self._quiet_until = 0.0

    # -- JobQueue ----------------------------------------------------------------------------
    def enqueue(self, kind: JobKind, row_id: int) -> None:
        """Send the job now, or leave its row for the sweeper; never raises."""
        with self._lock:
            quiet = time.monotonic() < self._quiet_until
        if quiet or not self.send(kind, row_id):
            self._unstamp(kind, row_id)

    def _unstamp(self, kind: JobKind, row_id: int) -> None:
        """Clear the row's stamp: no message is out, so the next sweep sends it."""
        try:
            with self.db.session() as session:
                dispatch.unmark(session, kind, [row_id], marked_at=None)
                session.commit()
        except SQLAlchemyError:  # the stamp grows old and the sweeper sends the job after requeue_after
            log.warning("could not note that %s(%s) was not sent", kind.name, row_id, exc_info=True)

    # -- sending -----------------------------------------------------------------------------
    def send(self, kind: JobKind, row_id: int) -> bool:
        """Publish one message; ``False`` (and a log line) if the broker could not take it."""
        queue = queue_name(self.settings, kind.queue)
        try:
            self.celery.send_task(TASK_NAME, args=[kind.name, row_id], queue=queue, retry=True)
        except Exception as exc:  # whatever the broker's client raises: the row stays queued
            log.warning(
                "the broker did not take %s(%s) (%s: %s); it will be sent again",
                kind.name,
                row_id,
                type(exc).__name__,
                exc,
            )
            with self._lock:
                self._quiet_until = time.monotonic() + self.settings.sweep_seconds
            return False
        with self._lock:
            self._quiet_until = 0.0
        return True

    # -- the web tier's questions --------------------------------------------------------------
    def check(self) -> None:
        """Connect to the broker once (short timeout); raises what the client raises if it cannot."""
        with self.celery.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, interval_start=0, timeout=self.settings.broker_timeout_seconds)

    def queue_lengths(self) -> dict[str, int]:
        """Messages waiting in each of Podium's broker queues (a queue no worker declared yet: 0)."""
        lengths: dict[str, int] = {}
        with self.celery.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, interval_start=0, timeout=self.settings.broker_timeout_seconds)
            for queue in QUEUES:
                # A passive declare of a missing queue closes the channel on RabbitMQ: one channel each.
                channel = connection.channel()
                try:
                    _, count, _ = channel.queue_declare(queue=queue_name(self.settings, queue), passive=True)
                    lengths[queue] = int(count)
                except connection.channel_errors:
                    lengths[queue] = 0
                finally:
                    channel.close()
        return lengths

    def close(self) -> None:
        """Let the app go. Its sending connections live in kombu's pool, which is shared by every app
        of this process on the same broker (closing them here would break the others); they close
        when the process exits."""
        self.celery.close()
