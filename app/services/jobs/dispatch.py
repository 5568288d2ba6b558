"""Which queue each job goes to, and the database's record of when each job was last sent.

A job's state lives on its row (``Submission`` for ``score_submission``, ``BaselineRun`` for
``run_baseline``), never in the broker. ``enqueued_at`` on that row says when a message for it
was last handed to the broker; a sender marks the row first, then sends, and clears the mark if
the send failed. The sweeper looks for rows whose message may be lost:

- ``queued`` and never sent (``enqueued_at`` empty: the broker was down) or sent longer ago than
  ``requeue_after`` (a broker that lost its messages);
- ``running`` with an expired lease (the worker died) and not sent again since the lease expired.

``take_due`` marks such rows in one conditional ``UPDATE``, so of several sweepers (every worker
and web process runs one) only one sends each row. A message sent twice anyway (a sweep racing an
upload's own send) costs nothing: claiming a row is a compare-and-set, so the second job finds
nothing to do.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, null, or_, select, true, update
from sqlalchemy.orm import Session

from app.services.baselines.runs import RUN_BASELINE
from app.services.jobs.enqueue import SCORE_SUBMISSION
from app.storage.models import BaselineRun, Submission

#: The queues of the distributed mode.
SCORING, GPU = "scoring", "gpu"
QUEUES = (SCORING, GPU)
#: Job name to queue: the one routing table (Celery sends, workers consume, metrics count by it).
JOB_QUEUES: dict[str, str] = {SCORE_SUBMISSION: SCORING, RUN_BASELINE: GPU}
#: Job name to the table whose rows the job's single id names.
JOB_ROWS: dict[str, type[Submission] | type[BaselineRun]] = {SCORE_SUBMISSION: Submission, RUN_BASELINE: BaselineRun}
#: Most rows one sweep sends for one job, oldest first; the next sweep sends the rest.
SWEEP_BATCH = 500


def queue_of(job: str) -> str:
    """The queue ``job`` runs on; an unknown job is a programming error."""
    try:
        return JOB_QUEUES[job]
    except KeyError:
        raise ValueError(f"no queue for the job {job!r}; known jobs: {', '.join(sorted(JOB_QUEUES))}") from None


def _due(model: Any, now: datetime, requeue_after: timedelta) -> Any:
    stale = now - requeue_after
    never_or_long_ago = or_(model.enqueued_at.is_(None), model.enqueued_at < stale)
    return or_(
        and_(model.status == "queued", never_or_long_ago),
        and_(
            model.status == "running",
            model.lease_expires_at < now,
            or_(never_or_long_ago, model.enqueued_at < model.lease_expires_at),
        ),
    )


def take_due(
    session: Session, job: str, *, now: datetime, requeue_after: timedelta, limit: int = SWEEP_BATCH
) -> list[int]:
    """Mark and return the ids of ``job``'s rows whose message may be lost (see the module's
    docstring); the caller sends them and commits. A row another sweeper took meanwhile is left out."""
    model = JOB_ROWS[job]
    due = _due(model, now, requeue_after)
    candidates = list(session.scalars(select(model.id).where(due).order_by(model.created_at, model.id).limit(limit)))
    if not candidates:
        return []
    # The condition is checked again by the UPDATE itself: on PostgreSQL a concurrent sweeper's
    # UPDATE waits for this one's row lock and then re-evaluates it against the new enqueued_at.
    taken = session.scalars(
        update(model)
        .where(model.id.in_(candidates), due)
        .values(enqueued_at=now)
        .returning(model.id)
        .execution_options(synchronize_session=False)
    )
    return sorted(taken)


def mark_sent(session: Session, job: str, row_ids: list[int], *, now: datetime) -> None:
    """Record that messages for ``job`` on these rows are being sent now (before sending them)."""
    model = JOB_ROWS[job]
    session.execute(
        update(model).where(model.id.in_(row_ids)).values(enqueued_at=now).execution_options(synchronize_session=False)
    )


def unmark(session: Session, job: str, row_ids: list[int], *, marked_at: datetime | None) -> None:
    """Forget the marks set at ``marked_at`` for sends that failed, so that the next sweep sends
    those rows (a row marked since by someone else keeps that mark); ``None``: whatever the mark."""
    model = JOB_ROWS[job]
    same = model.enqueued_at == marked_at if marked_at is not None else true()
    session.execute(
        update(model)
        .where(model.id.in_(row_ids), same)
        .values(enqueued_at=null())
        .execution_options(synchronize_session=False)
    )
