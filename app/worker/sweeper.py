"""The sweeper of the distributed mode: a thread in every worker and web process that sends again
the jobs whose message may be lost.

Every ``sweep_seconds`` it takes, for each job, the rows ``app.services.jobs.dispatch.take_due`` finds
(queued and never sent or sent long ago; running with an expired lease) and sends them. Several
sweepers never send the same row twice, because taking a row is a conditional ``UPDATE``. At the
first send the broker refuses, the sweep stops, clears the marks of what it did not send, and the
next sweep tries again: so after a broker outage everything waiting goes out within one interval.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy.exc import SQLAlchemyError

from app.config import Settings
from app.services.jobs import dispatch
from app.storage.db import Database
from app.storage.types import utcnow
from app.worker.retry import describe

log = logging.getLogger(__name__)

#: Sends one job; ``False`` when the broker did not take it.
Send = Callable[..., bool]


class Sweeper:
    """Sends again, every ``settings.sweep_seconds``, what ``dispatch.take_due`` finds."""

    def __init__(self, db: Database, send: Send, settings: Settings, *, jobs: tuple[str, ...] | None = None) -> None:
        self.db = db
        self.send = send
        self.settings = settings
        self.jobs = jobs if jobs is not None else tuple(dispatch.JOB_ROWS)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self) -> dict[str, list[int]]:
        """One sweep; returns the ids sent per job (a job with nothing to send is left out)."""
        now = utcnow()
        requeue_after = timedelta(seconds=self.settings.requeue_after_seconds)
        sent: dict[str, list[int]] = {}
        for job in self.jobs:
            with self.db.session() as session:
                taken = dispatch.take_due(session, job, now=now, requeue_after=requeue_after)
                session.commit()
            for n, row_id in enumerate(taken):
                if not self.send(job, row_id):
                    with self.db.session() as session:
                        dispatch.unmark(session, job, taken[n:], marked_at=now)
                        session.commit()
                    log.warning("the broker is unreachable: %d %s job(s) wait for the next sweep", len(taken) - n, job)
                    return sent
                sent.setdefault(job, []).append(row_id)
            if taken:
                log.info("sent %d %s job(s) again: %s", len(taken), job, taken[:20])
        return sent

    def start(self) -> None:
        """Sweep once now (what waited while nothing ran goes out at once), then every interval."""
        if self._thread is not None:
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, name="podium-sweeper", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while True:
            try:
                self.sweep()
            except SQLAlchemyError as exc:  # the database is down: the next sweep tries again
                log.warning("the sweeper could not reach the database: %s", describe(exc))
            except Exception:  # the sweeper must outlive any one bad sweep
                log.exception("the sweeper failed")
            if self._stopping.wait(self.settings.sweep_seconds):
                return
