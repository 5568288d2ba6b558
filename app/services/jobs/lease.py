"""Leases: how a worker holds the row of its job, for both kinds of job (scoring, baseline runs).

A row that waits is ``queued``; a worker ``take``s it with one conditional ``UPDATE`` (a
compare-and-set), which makes it ``running``, counts the attempt and sets a lease that the worker
``renew``s while it works. Every later write of that worker is guarded by ``holds`` (the row is
still running this attempt), so a worker whose lease expired, and whose job was resumed elsewhere,
changes nothing. A row ``running`` with an expired lease is ``claimable`` again: its worker died.

The columns are those of ``app.storage.models.LeasedRow``, which both kinds of job row share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Row, or_, update
from sqlalchemy.orm import Session

from app.storage.models import BaselineRun, CodeRun, JobStatus, Submission

#: The tables whose rows are jobs (both have the columns of ``LeasedRow``).
JobRow = type[Submission] | type[BaselineRun] | type[CodeRun]

QUEUED, RUNNING = JobStatus.QUEUED, JobStatus.RUNNING


def claimable(model: JobRow, now: datetime) -> ColumnElement[bool]:
    """Rows a worker may take: queued, or running with a lease that expired (its worker died)."""
    return or_(model.status == QUEUED, (model.status == RUNNING) & (model.lease_expires_at < now))


def holds(model: JobRow, row_id: int, attempt: int) -> ColumnElement[bool]:
    """The row is still running the attempt ``attempt`` (no later attempt took it over)."""
    return (model.id == row_id) & (model.status == RUNNING) & (model.attempts == attempt)


def renewal(now: datetime, lease_seconds: int) -> dict[str, Any]:
    """The values that extend a lease from ``now``."""
    return {"heartbeat_at": now, "lease_expires_at": now + timedelta(seconds=lease_seconds)}


def take(
    session: Session,
    model: JobRow,
    row_id: int,
    *,
    worker: str,
    now: datetime,
    lease_seconds: int,
    where: Sequence[ColumnElement[bool]] = (),
    values: Mapping[str, Any] | None = None,
    returning: Sequence[Any] = (),
) -> Row[Any] | None:
    """Claim the row for a new attempt, or ``None`` if it is not waiting (finished, or held by a live
    worker). Returns the row's ``attempts`` (the new attempt's number) and the ``returning`` columns.

    On PostgreSQL a second worker's ``UPDATE`` of the same row waits for this one's row lock, then
    checks the condition again against the committed row and matches nothing.
    """
    return session.execute(
        update(model)
        .where(model.id == row_id, claimable(model, now), *where)
        .values(
            status=RUNNING,
            attempts=model.attempts + 1,
            started_at=now,
            worker=worker[:200],
            **renewal(now, lease_seconds),
            **(values or {}),
        )
        .returning(model.attempts, *returning)
        .execution_options(synchronize_session=False)
    ).one_or_none()


def renew(session: Session, model: JobRow, row_id: int, attempt: int, *, now: datetime, lease_seconds: int) -> bool:
    """The heartbeat: extend the lease; ``False`` if the attempt lost the row (resumed elsewhere)."""
    result = session.execute(
        update(model)
        .where(holds(model, row_id, attempt))
        .values(**renewal(now, lease_seconds))
        .execution_options(synchronize_session=False)
    )
    return _one(result)


def finish(
    session: Session,
    model: JobRow,
    row_id: int,
    attempt: int,
    status: str,
    *,
    now: datetime,
    where: Sequence[ColumnElement[bool]] = (),
    **values: Any,
) -> bool:
    """End the attempt with ``status`` (and ``values``), releasing the lease; ``False`` if the attempt
    no longer holds the row, in which case nothing changes."""
    result = session.execute(
        update(model)
        .where(holds(model, row_id, attempt), *where)
        .values(status=status, finished_at=now, lease_expires_at=None, **values)
        .execution_options(synchronize_session=False)
    )
    return _one(result)


def give_up(session: Session, model: JobRow, row_id: int, status: str, *, now: datetime, **values: Any) -> bool:
    """End a row that was never taken (its job could not even claim it) with ``status``. Only a
    ``queued`` row: a running one belongs to its worker."""
    result = session.execute(
        update(model)
        .where(model.id == row_id, model.status == QUEUED)
        .values(status=status, finished_at=now, lease_expires_at=None, **values)
        .execution_options(synchronize_session=False)
    )
    return _one(result)


def put_back_values(model: JobRow) -> dict[str, Any]:
    """The values that put a claimed row back to wait: queued, its attempt not counted, and no message out for
    it (a sweeper sends one)."""
    return {
        "status": QUEUED,
        "attempts": model.attempts - 1,
        "started_at": None,
        "lease_expires_at": None,
        "heartbeat_at": None,
        "enqueued_at": None,
        "sent_at": None,
    }


def put_back(session: Session, model: JobRow, row_id: int, attempt: int, **values: Any) -> bool:
    """Put the row back to wait (``put_back_values``, and ``values``); ``False`` if the attempt no longer holds it."""
    result = session.execute(
        update(model)
        .where(holds(model, row_id, attempt))
        .values(**put_back_values(model), **values)
        .execution_options(synchronize_session=False)
    )
    return _one(result)


def _one(result: Any) -> bool:
    return getattr(result, "rowcount", 0) == 1
