"""The sweeper: the one way jobs are resumed, in every mode. A thread in every worker and web process
(and in the embedded pool) sends again the jobs whose message may be lost.

Every ``sweep_seconds`` it takes, for each kind of job (``app.services.jobs.registry``), the rows
``app.services.jobs.dispatch.take_due`` finds (queued and never sent, sent but never confirmed, or
sent long ago; running with an expired lease) and sends them, ahead of fresh jobs, then confirms
what was sent. In the distributed mode it first compares the broker's marker with the database
(``app.worker.broker_marker``): a broker that came back without its marker lost its messages, and
every job queued before then is sent again in the same sweep. On Redis it also takes the jobs whose
message a worker took more than a lease ago and never claimed (``app.worker.stranded``: the worker
died before its claim committed), as an expired lease would, or a wake-up when another message
claimed that job's row meanwhile. Several sweepers never send the same
row twice, because taking a row is a conditional ``UPDATE``. At the first send that is refused, the
sweep stops, clears the marks of what it did not send, and the next sweep tries again: so after a
broker outage everything waiting goes out within one interval.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError

from app.config import Settings
from app.services.jobs import dispatch
from app.services.jobs.kinds import JobKind
from app.services.jobs.registry import KINDS
from app.services.jobs.retry import describe
from app.storage import collect
from app.storage.db import Database
from app.storage.types import utcnow
from app.worker import broker_marker, stranded

log = logging.getLogger(__name__)

#: Sends one job (the last argument: it is sent again, ahead of fresh ones); ``False`` when it could
#: not be sent (the broker did not take it).
Send = Callable[[JobKind, int, bool], bool]

#: How often a sweeper removes the stored files nothing refers to (``app.storage.collect``), in seconds.
COLLECT_EVERY = 3600.0


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
        marker: broker_marker.Marker | None = None,
        unacked: stranded.Unacked | None = None,
    ) -> None:
        self.db = db
        self.send = send
        self.marker = marker
        # A sweeper of the distributed mode (one with a marker) reads its broker's unacknowledged messages.
        if unacked is None and marker is not None:
            unacked = stranded.for_broker(marker.celery, marker.settings)
        self.unacked = unacked
        self.settings = settings
        self.kinds = kinds
        self.every = every if every is not None else settings.sweep_seconds
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._collected_at = time.monotonic()

    def sweep(self, *, requeue_after: timedelta | None = None) -> dict[str, list[int]]:
        """One sweep; returns the ids sent per kind of job (a kind with nothing to send is left out).
        ``requeue_after`` overrides the setting (zero: every waiting row, as after a restart)."""
        now = utcnow()
        if requeue_after is None:
            requeue_after = timedelta(seconds=self.settings.requeue_after_seconds)
        lost = self._lost(now)
        deliveries = self._stranded()
        sent: dict[str, list[int]] = {}
        for kind in self.kinds:
            delivered = {d.row_id: datetime.fromtimestamp(d.at, UTC) for d in deliveries if d.job == kind.name}
            with self.db.session() as session:
                died = dispatch.take_stranded(session, kind, delivered, now=now)
                taken = lost.get(kind.name, []) + died
                taken += dispatch.take_due(session, kind, now=now, requeue_after=requeue_after)
                session.commit()
            for n, row_id in enumerate(taken):
                if not self.send(kind, row_id, True):
                    self._settle(kind, taken[:n], taken[n:], now)
                    if n:
                        sent[kind.name] = taken[:n]
                    log.warning(
                        "the broker is unreachable: %d %s job(s) wait for the next sweep", len(taken) - n, kind.name
                    )
                    return sent
            if taken:
                self._settle(kind, taken, [], now)
                sent[kind.name] = taken
                log.info("sent %d %s job(s) again: %s", len(taken), kind.name, taken[:20])
            if died:
                self._forget([d.tag for d in deliveries if d.job == kind.name and d.row_id in died])
            self._wake([d for d in deliveries if d.job == kind.name and d.row_id not in died], kind)
        return sent

    def _wake(self, deliveries: list[stranded.Delivery], kind: JobKind) -> None:
        """For each stale delivery whose row another message claimed, send one wake-up while rows wait
        (``dispatch.claimed_elsewhere``); of several sweepers, the one that removes the delivery sends it."""
        if self.unacked is None or not deliveries:
            return
        with self.db.session(read_only=True) as session:
            taken, anyone = dispatch.claimed_elsewhere(session, kind, [d.row_id for d in deliveries])
        stale = [d for d in deliveries if d.row_id in taken]
        try:
            mine = set(self.unacked.take([d.tag for d in stale]))
        except Exception as exc:  # whatever the broker's client raises: the next sweep sees them again
            log.warning("could not take %d stale deliveries (%s: %s)", len(stale), type(exc).__name__, exc)
            return
        woken = [d.row_id for d in stale if d.tag in mine and anyone and self.send(kind, d.row_id, True)]
        if woken:
            with self.db.session() as session:
                dispatch.count_wake_ups(session, kind, len(woken))
                session.commit()
            log.info("sent %d %s wake-up(s) for messages of workers that may have died", len(woken), kind.name)

    def collect_if_due(self, *, every: float = COLLECT_EVERY) -> collect.Collected | None:
        """Remove the stored files nothing refers to, if ``every`` seconds passed since this sweeper last did."""
        if time.monotonic() - self._collected_at < every:
            return None
        self._collected_at = time.monotonic()
        removed = collect.collect(self.db)
        if removed.files:
            log.info("removed %d stored files (%d bytes) that nothing refers to", removed.files, removed.bytes)
        abandoned = collect.abandoned_direct_uploads(self.db, timedelta(hours=self.settings.direct_upload_hours))
        if abandoned:
            log.info("removed %d direct uploads that were never completed in time", abandoned)
        return removed

    def _stranded(self) -> list[stranded.Delivery]:
        """The messages a worker took more than a lease ago without acknowledging them (none when the
        broker keeps no such list, or cannot be asked)."""
        if self.unacked is None:
            return []
        try:
            return self.unacked.older_than(self.settings.lease_seconds)
        except Exception as exc:  # whatever the broker's client raises
            log.warning("could not read the broker's unacknowledged messages (%s: %s)", type(exc).__name__, exc)
            return []

    def _forget(self, tags: list[str]) -> None:
        """Drop the deliveries whose jobs were sent again, so that the broker never returns them."""
        if self.unacked is None:
            return
        try:
            self.unacked.drop(tags)
        except Exception as exc:  # a later delivery of it only finds its row taken
            log.warning("could not drop %d stale deliveries (%s: %s)", len(tags), type(exc).__name__, exc)

    def _lost(self, now: datetime) -> dict[str, list[int]]:
        """The rows taken because the broker lost its messages (none when it did not, or cannot be
        asked: then the sends find out)."""
        if self.marker is None:
            return {}
        try:
            with self.db.session() as session:
                taken = {}
                if broker_marker.check(session, self.marker):
                    taken = {kind.name: dispatch.take_lost(session, kind, now=now) for kind in self.kinds}
                session.commit()
                return taken
        except SQLAlchemyError:
            raise
        except Exception as exc:  # whatever the broker's client raises
            log.warning("could not read the broker's marker (%s: %s)", type(exc).__name__, exc)
            return {}

    def _settle(self, kind: JobKind, sent: list[int], unsent: list[int], now: datetime) -> None:
        """Confirm the stamps of what was sent, clear those of what was not."""
        with self.db.session() as session:
            if sent:
                dispatch.confirm_sent(session, kind, sent, marked_at=now)
            if unsent:
                dispatch.unmark(session, kind, unsent, marked_at=now)
            session.commit()

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
                self.collect_if_due()
            except SQLAlchemyError as exc:  # the database is down: the next sweep tries again
                log.warning("the sweeper could not reach the database: %s", describe(exc))
            except Exception:  # the sweeper must outlive any one bad sweep
                log.exception("the sweeper failed")
            if self._stopping.wait(self.every):
                return
