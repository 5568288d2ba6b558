"""The sweeper: the one way jobs are resumed, in every mode. A thread in every worker and web process
(and in the embedded pool) sends again the jobs whose message may be lost.

Every ``sweep_seconds`` it takes, for each kind of job (``app.services.jobs.registry``), the rows
``app.services.jobs.dispatch.take_due`` finds (queued and never sent or sent long ago; running with
an expired lease) and sends them. Several sweepers never send the same row twice, because taking a
row is a conditional ``UPDATE``. At the first send that is refused, the sweep stops, clears the
marks of what it did not send, and the next sweep tries again: so after a broker outage everything
waiting goes out within one interval.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy.exc import SQLAlchemyError

from app.config import Settings
from app.services.jobs import dispatch
from app.services.jobs.kinds import JobKind
from app.services.jobs.registry import KINDS
from app.services.jobs.retry import describe
from app.storage.db import Database
from app.storage.types import utcnow

log = logging.getLogger(__name__)

#: Sends one job; ``False`` when it could not be sent (the broker did not take it).
Send = Callable[[JobKind, int], bool]


class Sweeper:
    """Sends again, every ``every`` seconds (``settings.sweep_seconds``), what ``dispatch.take_due`` finds."""

    def __init__(
        self,
        db: Database,
        send: Send,
        settings: Settings,
        *,
        kinds: tuple[JobKind, ...] = KINDS,
        every: float | None = None,
    ) -> None:
        self.db = db
        self.send = send
        self.settings = settings
        self.kinds = kinds
        self.every = every if every is not None else settings.sweep_seconds
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self, *, requeue_after: timedelta | None = None) -> dict[str, list[int]]:
        """One sweep; returns the ids sent per kind of job (a kind with nothing to send is left out).
        ``requeue_after`` overrides the setting (zero: every waiting row, as after a restart)."""
        now = utcnow()
        if requeue_after is None:
            requeue_after = timedelta(seconds=self.settings.requeue_after_seconds)
        sent: dict[str, list[int]] = {}
        for kind in self.kinds:
            with self.db.session() as session:
                taken = dispatch.take_due(session, kind, now=now, requeue_after=requeue_after)
                session.commit()
            for n, row_id in enumerate(taken):
                if not self.send(kind, row_id):
                    with self.db.session() as session:
                        dispatch.unmark(session, kind, taken[n:], marked_at=now)
                        session.commit()
                    log.warning(
                        "the broker is unreachable: %d %s job(s) wait for the next sweep", len(taken) - n, kind.name
                    )
                    return sent
                sent.setdefault(kind.name, []).append(row_id)
            if taken:
                log.info("sent %d %s job(s) again: %s", len(taken), kind.name, taken[:20])
        return sent

    def start(self, *, sweep_now: bool = True) -> None:
        """Sweep now (what waited while nothing ran goes out at once; ``sweep_now=False`` when the
        caller just swept), then every interval."""
        if self._thread is not None:
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, args=(sweep_now,), name="podium-sweeper", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self, sweep_now: bool) -> None:
        if not sweep_now and self._stopping.wait(self.every):
            return
        while True:
            try:
                self.sweep()
            except SQLAlchemyError as exc:  # the database is down: the next sweep tries again
                log.warning("the sweeper could not reach the database: %s", describe(exc))
            except Exception:  # the sweeper must outlive any one bad sweep
                log.exception("the sweeper failed")
            if self._stopping.wait(self.every):
                return
