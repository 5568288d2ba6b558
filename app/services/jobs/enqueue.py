"""Sending a job only after the commit: ``enqueue_after_commit(session, SCORE_SUBMISSION, row_id)``.

The job waits in ``session.info`` until the transaction commits, then goes to the ``JobQueue`` that
whoever opened the session put in ``session.info[QUEUE_KEY]`` (the embedded pool, or Celery in
distributed mode); a rollback drops it. So a worker never looks for a row that was not committed,
and a refused request leaves no job behind. If no queue is attached, or the process dies between
commit and enqueue, the row stays ``queued`` in the database and a sweeper finds it. Just before
the commit, inside the transaction, the rows are stamped as being sent (``dispatch.mark_sent``), so
that no sweeper sends them a second time; a broker's queue confirms the stamps of what it sent, in
one transaction per commit (``enqueue_many``), and clears those of what it could not send. A stamp
left unconfirmed (the process died between its commit and its send) is sent again by a sweeper
within seconds.
"""

from __future__ import annotations

import logging

from sqlalchemy import event
from sqlalchemy.orm import Session

from app.services.jobs import dispatch
from app.services.jobs.kinds import QUEUE_KEY, JobKind, JobQueue
from app.storage.types import utcnow

log = logging.getLogger(__name__)

_PENDING = "podium_pending_jobs"
Pending = list[tuple[JobKind, int]]


def enqueue_after_commit(session: Session, kind: JobKind, row_id: int) -> None:
    """Send the job of ``kind`` for the row ``row_id`` to the session's queue once the transaction commits."""
    session.info.setdefault(_PENDING, []).append((kind, row_id))


@event.listens_for(Session, "before_commit")
def _stamp_pending(session: Session) -> None:
    pending: Pending = session.info.get(_PENDING, [])
    queue: JobQueue | None = session.info.get(QUEUE_KEY)
    if pending and queue is not None:
        dispatch.mark_sent(session, pending, now=utcnow(), confirmed=not queue.confirms_sends)


@event.listens_for(Session, "after_commit")
def _send_pending(session: Session) -> None:
    if session.in_nested_transaction():  # a savepoint was released; the real commit comes later
        return
    pending: Pending = session.info.pop(_PENDING, [])
    if not pending:
        return
    queue: JobQueue | None = session.info.get(QUEUE_KEY)
    if queue is None:
        log.info("no job queue on this session; %d job(s) stay queued in the database", len(pending))
        return
    many = getattr(queue, "enqueue_many", None)
    try:
        if many is not None:  # one confirmation for all of them
            many(pending)
            return
        for kind, row_id in pending:
            queue.enqueue(kind, row_id)
    except Exception:  # the rows stay queued; a sweeper sends them later
        log.exception("could not enqueue %d job(s)", len(pending))


@event.listens_for(Session, "after_rollback")
def _drop_pending(session: Session) -> None:
    if not session.in_nested_transaction():
        session.info.pop(_PENDING, None)
