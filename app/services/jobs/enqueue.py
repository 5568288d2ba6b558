"""Background jobs as services see them: a name plus ids, sent to a queue only after the commit.

Services call ``enqueue_after_commit(session, "score_submission", submission_id)``. The job waits
in ``session.info`` until the transaction commits, then goes to the ``JobQueue`` that whoever opened
the session put in ``session.info["queue"]`` (the embedded pool, or Celery in distributed mode); a
rollback drops it. So a worker never looks for a row that was not committed, and a refused request
leaves no job behind. If no queue is attached, or the process dies between commit and enqueue, the
row stays ``queued`` in the database and the sweeper finds it. A queue with a ``note_sending(session,
jobs)`` method is called with the jobs just before the commit, inside the transaction.
"""

from __future__ import annotations

import logging
from typing import Protocol

from sqlalchemy import event
from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

#: Job names; the worker package maps each to its function.
SCORE_SUBMISSION = "score_submission"
_PENDING = "podium_pending_jobs"
QUEUE_KEY = "queue"


class JobQueue(Protocol):
    """Where committed jobs go. ``enqueue`` must be quick and must not raise for a full queue."""

    def enqueue(self, job: str, *args: int) -> None: ...


def enqueue_after_commit(session: Session, job: str, *args: int) -> None:
    """Send ``job(*args)`` to the session's queue once the current transaction commits."""
    session.info.setdefault(_PENDING, []).append((job, args))


@event.listens_for(Session, "before_commit")
def _note_pending(session: Session) -> None:
    # A queue may note in the very transaction that its jobs are about to be sent (the distributed
    # queue stamps each row's ``enqueued_at``, so that no sweeper sends it a second time).
    pending: list[tuple[str, tuple[int, ...]]] = session.info.get(_PENDING, [])
    note = getattr(session.info.get(QUEUE_KEY), "note_sending", None)
    if pending and note is not None:
        note(session, pending)


@event.listens_for(Session, "after_commit")
def _send_pending(session: Session) -> None:
    if session.in_nested_transaction():  # a savepoint was released; the real commit comes later
        return
    pending: list[tuple[str, tuple[int, ...]]] = session.info.pop(_PENDING, [])
    if not pending:
        return
    queue: JobQueue | None = session.info.get(QUEUE_KEY)
    if queue is None:
        log.info("no job queue on this session; %d job(s) stay queued in the database", len(pending))
        return
    for job, args in pending:
        try:
            queue.enqueue(job, *args)
        except Exception:  # the row stays queued; the sweeper picks it up
            log.exception("could not enqueue %s%r", job, args)


@event.listens_for(Session, "after_rollback")
def _drop_pending(session: Session) -> None:
    if not session.in_nested_transaction():
        session.info.pop(_PENDING, None)
