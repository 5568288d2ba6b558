"""``CeleryQueue``: the ``JobQueue`` of the distributed mode, and the web tier's view of the broker.

A job is sent after its transaction committed (``app.services.jobs.enqueue``). Its row's
``enqueued_at`` is stamped in that same transaction, so the row itself says a message is on its way
and no sweeper sends it too. After the sends of one commit, one short transaction confirms those the
broker took (``sent_at``) and clears the stamps of those it refused, which a sweeper sends as soon
as the broker is back. A process that dies between its commit and its sends leaves stamps that are
never confirmed, and a sweeper sends those jobs ``dispatch.SEND_GRACE`` later.

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
from app.worker.broker import TASK_NAME, priority, queue_name

log = logging.getLogger(__name__)


class CeleryQueue:
    """Sends jobs to their Celery queue; also answers the web tier's questions about the broker."""

    #: A send can fail after the commit: each one is confirmed in the database.
    confirms_sends = True

    def __init__(self, celery: Celery, db: Database, settings: Settings) -> None:
        self.celery = celery
        self.db = db
        self.settings = settings
        self._lock = threading.Lock()
        self._quiet_until = 0.0

    # -- JobQueue ----------------------------------------------------------------------------
    def enqueue(self, kind: JobKind, row_id: int) -> None:
        """Send the job now, or leave its row for the sweeper; never raises."""
        self.enqueue_many([(kind, row_id)])

    def enqueue_many(self, jobs: list[tuple[JobKind, int]]) -> None:
        """Send the jobs of one commit, then confirm what the broker took and clear the stamps of
        the rest in one transaction; never raises."""
        with self._lock:
            quiet = time.monotonic() < self._quiet_until
        sent: dict[JobKind, list[int]] = {}
        refused: dict[JobKind, list[int]] = {}
        for kind, row_id in jobs:
            if not quiet and self.send(kind, row_id):
                sent.setdefault(kind, []).append(row_id)
            else:  # after the first refusal the broker is not asked again for a while
                quiet = True
                refused.setdefault(kind, []).append(row_id)
        try:
            with self.db.session() as session:
                for kind, ids in sent.items():
                    dispatch.confirm_sent(session, kind, ids, marked_at=None)
                for kind, ids in refused.items():
                    dispatch.unmark(session, kind, ids, marked_at=None)
                session.commit()
        except SQLAlchemyError:  # unconfirmed stamps: a sweeper sends these jobs again soon
            log.warning("could not note which of %d job(s) were sent", len(jobs), exc_info=True)

    # -- sending -----------------------------------------------------------------------------
    def send(self, kind: JobKind, row_id: int, again: bool = False) -> bool:
        """Publish one message (``again``: a job a sweeper sends again, ahead of fresh ones);
        ``False`` (and a log line) if the broker could not take it."""
        queue = queue_name(self.settings, kind.queue)
        try:
            self.celery.send_task(
                TASK_NAME,
                args=[kind.name, row_id],
                queue=queue,
                priority=priority(self.settings, again=again),
                retry=True,
            )
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
