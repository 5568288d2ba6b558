"""What a kind of job is, and what every job gets to run with.

Each kind of job is declared once, as a ``JobKind`` next to its function (``SCORE_SUBMISSION`` in
``app.services.scoring.job``, ``RUN_BASELINE`` in ``app.services.baselines.job``), and listed in
``app.services.jobs.registry``. Whatever runs jobs reads that declaration: the embedded pool (its
lanes follow the queues), the Celery task (name to function), the senders (name to queue) and the
sweepers (the table whose rows say which jobs wait). A job's message is its kind's name and one
row id; the job's whole state lives on that row (see ``app.services.jobs.lease``).

A job function is a plain function of a ``JobContext`` and the row id. It owns its transactions
(short ones: the slow part runs outside any transaction), so the same function runs in a thread of
the server (embedded mode) or in a Celery worker process (distributed mode).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol, TypeVar

from sqlalchemy.orm import Session

from app.config import Settings
from app.services.jobs.lease import JobRow
from app.services.jobs.retry import GaveUp, RetryPolicy, with_retries
from app.services.scoring.gold import GoldCache
from app.services.scoring.handoff import ParsedSubmissions
from app.services.submissions.limits import Limits
from app.storage.db import Database

log = logging.getLogger(__name__)

T = TypeVar("T")

#: The queues of the distributed mode; the embedded pool has one lane for each.
SCORING, GPU = "scoring", "gpu"
QUEUES = (SCORING, GPU)
#: Where a session keeps the queue its committed jobs go to (``app.services.jobs.enqueue``).
QUEUE_KEY = "queue"


class JobQueue(Protocol):
    """Where committed jobs go. ``enqueue`` must be quick and must not raise for a full queue.

    ``confirms_sends``: a send can fail after the commit (a broker), so the queue confirms each send
    it made (``dispatch.confirm_sent``) and a stamp left unconfirmed means the send never happened;
    a queue in memory cannot fail to take a job, and its stamps count as sent at once."""

    confirms_sends: bool

    def enqueue(self, kind: JobKind, row_id: int) -> None: ...


@dataclass
class JobContext:
    """What a job needs besides its row id: the database, settings, the gold cache and the queue for follow-ups."""

    db: Database
    settings: Settings
    gold_cache: GoldCache
    queue: JobQueue | None = None
    #: Submissions parsed at upload by this same process (the embedded mode), for their jobs to take.
    handoff: ParsedSubmissions | None = None
    #: This process as leases name it: ``host:pid``, or for a pool child of a Celery worker
    #: ``host:workerpid/childpid`` (``pool_child``), so that an operator sees which worker held a job.
    name: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    pool_child: bool = False

    @property
    def limits(self) -> Limits:
        return Limits.of(self.settings)

    @property
    def worker(self) -> str:
        """Who holds a row, as leases record it: the process (a pool child with its worker) and,
        where several threads run jobs (the embedded pool), the thread."""
        return self.name if self.pool_child else f"{self.name}/{threading.current_thread().name}"

    def session(self, *, read_only: bool = False) -> Session:
        return self.db.session(read_only=read_only, info={QUEUE_KEY: self.queue})

    def write(self, step: Callable[[Session], T]) -> T:
        """``step(session)`` in a transaction of its own, committed."""
        with self.session() as session:
            out = step(session)
            session.commit()
            return out

    def read(self, step: Callable[[Session], T]) -> T:
        """``step(session)`` in a read-only transaction."""
        with self.session(read_only=True) as session:
            return step(session)

    def retrying(self, kind: JobKind) -> Callable[[str, Callable[[], T]], T]:
        """``retry(what, step)``: ``step()`` retried after the kind's transient errors (``with_retries``)."""
        return partial(with_retries, self.settings, policy=kind.retry)

    def record_failure(self, kind: JobKind, row_id: int, fail: Callable[[Session], object]) -> None:
        """Write a failure with ``fail(session)``, retried; if the database keeps failing, the row
        is left running until its lease expires and a sweeper sends the job again."""
        try:
            with_retries(self.settings, "recording a failure", lambda: self.write(fail), policy=kind.retry)
        except GaveUp:
            log.exception("could not record the failure of %s %s", kind.name, row_id)

    def give_up(
        self, kind: JobKind, row_id: int, exc: GaveUp, fail: Callable[[Session, str], object], *, claimed: bool
    ) -> None:
        """A step kept failing: fail the row with ``fail(session, exc.reason)``, once. If
        even that cannot be written, the row is left as it is for a sweeper (queued, or running until
        its lease expires); one never claimed is sent again at once, as its message was consumed."""
        log.error("%s %s: %s", kind.name, row_id, exc.reason)
        try:
            self.write(lambda session: fail(session, exc.reason))
        except kind.retry.transient:
            log.error("%s %s stays as it is until the database answers again", kind.name, row_id)
            if not claimed and self.queue is not None:
                self.queue.enqueue(kind, row_id)


@dataclass(frozen=True)
class JobKind:
    """One kind of job: see the module's docstring."""

    #: The name its messages carry.
    name: str
    #: ``SCORING`` or ``GPU``.
    queue: str
    #: The table whose row (one per job) holds the job's state, lease included.
    row: JobRow
    #: The function: ``run(ctx, row_id)``.
    run: Callable[[JobContext, int], None]
    retry: RetryPolicy = field(default_factory=RetryPolicy)
