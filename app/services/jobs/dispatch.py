"""The database's record of when each job was last sent, and what a sweeper sends again.

A job's state lives on its row (``Submission`` for ``score_submission``, ``BaselineRun`` for
``run_baseline``; see ``app.services.jobs.kinds``), never in a broker or in a pool's memory.
``enqueued_at`` on that row says when a message for it was last handed to a queue; a sender marks
the row first, then sends, and clears the mark if the send failed. A sweeper (``app.worker.sweeper``,
the one way jobs are resumed, in every mode) looks for rows whose message may be lost:

- ``queued`` and never sent (``enqueued_at`` empty: the broker was down) or sent longer ago than
  ``requeue_after`` (a broker that lost its messages);
- ``running`` with an expired lease (the worker died) and not sent again since the lease expired.

``take_due`` marks such rows in one conditional ``UPDATE``, so of several sweepers (every worker
and web process runs one) only one sends each row. A message sent twice anyway (a sweep racing an
upload's own send) costs nothing: claiming a row is a compare-and-set, so the second job finds
nothing to do. A queue that lives in memory (the embedded pool) lost all its messages when its
process stopped, so when it starts it takes every waiting row (``requeue_after`` zero).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, null, or_, select, true, update
from sqlalchemy.orm import Session

from app.services.jobs.kinds import JobKind
from app.services.jobs.lease import QUEUED, RUNNING, JobRow

#: Most rows one sweep sends for one kind of job, oldest first; the next sweep sends the rest.
SWEEP_BATCH = 500


def _due(model: JobRow, now: datetime, requeue_after: timedelta) -> Any:
    stale = now - requeue_after
    never_or_long_ago = or_(model.enqueued_at.is_(None), model.enqueued_at < stale)
    return or_(
        and_(model.status == QUEUED, never_or_long_ago),
        and_(
            model.status == RUNNING,
            model.lease_expires_at < now,
            or_(never_or_long_ago, model.enqueued_at < model.lease_expires_at),
        ),
    )


def take_due(
    session: Session, kind: JobKind, *, now: datetime, requeue_after: timedelta, limit: int = SWEEP_BATCH
) -> list[int]:
    """Mark and return the ids of the rows of ``kind`` whose message may be lost (see the module's
    docstring); the caller sends them and commits. A row another sweeper took meanwhile is left out."""
    model = kind.row
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


def mark_sent(session: Session, jobs: Sequence[tuple[JobKind, int]], *, now: datetime) -> None:
    """Record that messages for these jobs are being sent now (before sending them): one ``UPDATE``
    per kind, however many rows (a phase's rescore)."""
    rows: dict[JobRow, list[int]] = {}
    for kind, row_id in jobs:
        rows.setdefault(kind.row, []).append(row_id)
    for model, ids in rows.items():
        session.execute(
            update(model).where(model.id.in_(ids)).values(enqueued_at=now).execution_options(synchronize_session=False)
        )


def unmark(session: Session, kind: JobKind, row_ids: list[int], *, marked_at: datetime | None) -> None:
    """Forget the marks set at ``marked_at`` for sends that failed, so that the next sweep sends
    those rows (a row marked since by someone else keeps that mark); ``None``: whatever the mark."""
    model = kind.row
    same = model.enqueued_at == marked_at if marked_at is not None else true()
    session.execute(
        update(model)
        .where(model.id.in_(row_ids), same)
        .values(enqueued_at=null())
        .execution_options(synchronize_session=False)
    )
