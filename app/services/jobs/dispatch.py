"""The database's record of each job's message, and what a sweeper sends again.

A job's state lives on its row (``Submission`` for ``score_submission``, ``BaselineRun`` for
``run_baseline``; see ``app.services.jobs.kinds``), never in a broker or in a pool's memory. Sending
a message is recorded in two steps: ``enqueued_at`` is stamped before the send (in the very
transaction that stores the job, for an upload), and ``sent_at`` is set to the same instant once the
queue took the message (``confirm_sent``; a queue in memory confirms at once). A sweeper
(``app.worker.sweeper``, the one way jobs are resumed, in every mode) looks for rows whose message
may be lost:

- ``queued`` and never stamped (the broker was down), stamped but not confirmed after ``SEND_GRACE``
  (the process died between its commit and its send), or stamped longer ago than ``requeue_after``
  (the last resort for a message lost without a trace);
- ``running`` with an expired lease (the worker died) and not sent again since the lease expired;
- ``queued`` while the broker says a worker took its message longer than a lease ago and never
  acknowledged it: the worker died before its claim committed (``take_stranded``, on Redis; RabbitMQ
  puts such a message back itself). If another message claimed that row meanwhile, the row that message
  stood for may now wait without one: the sweeper sends a wake-up instead (``claimed_elsewhere``).

A broker that comes back without its messages is noticed by its marker (``app.worker.broker_marker``)
and ``take_lost`` then takes every queued row stamped before that instant. ``take_due`` and
``take_lost`` mark the rows they take in one conditional ``UPDATE``, so of several sweepers (every
worker and web process runs one) only one sends each row, and they count what they took
(``counters``). A message sent twice anyway (a sweep racing an upload's own send) costs nothing:
claiming a row is a compare-and-set, so the second job finds nothing to do. A queue that lives in
memory (the embedded pool) lost all its messages when its process stopped, so when it starts it
takes every waiting row (``requeue_after`` zero).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, null, or_, select, true, update
from sqlalchemy.orm import Session

from app.services.jobs import counters
from app.services.jobs.kinds import JobKind
from app.services.jobs.lease import QUEUED, RUNNING, JobRow
from app.services.jobs.routing import on_platform

#: Most rows one sweep sends for one kind of job, oldest first; the next sweep sends the rest.
SWEEP_BATCH = 500
#: A stamp not confirmed this long after it was set belongs to a send that never happened. A send
#: gives up after a few seconds (``broker_timeout_seconds``, one retry), and a late confirmation only
#: costs a duplicate message, which claiming turns into a no-op.
SEND_GRACE = timedelta(seconds=10)


def _due(model: JobRow, now: datetime, requeue_after: timedelta) -> Any:
    unconfirmed = or_(model.sent_at.is_(None), model.sent_at != model.enqueued_at)
    send_lost = or_(
        model.enqueued_at.is_(None),
        model.enqueued_at < now - requeue_after,
        and_(model.enqueued_at < now - SEND_GRACE, unconfirmed),
    )
    return or_(
        and_(model.status == QUEUED, send_lost),
        and_(
            model.status == RUNNING,
            model.lease_expires_at < now,
            or_(send_lost, model.enqueued_at < model.lease_expires_at),
        ),
    )


def _take(
    session: Session, kind: JobKind, condition: Any, *, now: datetime, limit: int, worker_died: bool = False
) -> list[int]:
    """Mark the rows that meet ``condition`` (oldest first, at most ``limit``) and count them:
    ``resumed`` the running ones (their worker died) or all of them (``worker_died``), ``resent``
    the queued ones. Never a row that a competition's own queue serves (``routing.on_platform``): its remote
    workers ask for it."""
    model = kind.row
    condition = and_(condition, on_platform(model))
    candidates = list(
        session.scalars(select(model.id).where(condition).order_by(model.created_at, model.id).limit(limit))
    )
    if not candidates:
        return []
    # The condition is checked again by the UPDATE itself: on PostgreSQL a concurrent sweeper's
    # UPDATE waits for this one's row lock and then re-evaluates it against the new enqueued_at.
    rows = session.execute(
        update(model)
        .where(model.id.in_(candidates), condition)
        .values(enqueued_at=now)
        .returning(model.id, model.status)
        .execution_options(synchronize_session=False)
    ).all()
    resumed = len(rows) if worker_died else sum(status == RUNNING for _, status in rows)
    counters.bump(session, counters.RESUMED, kind.name, resumed)
    counters.bump(session, counters.RESENT, kind.name, len(rows) - resumed)
    return sorted(row_id for row_id, _ in rows)


def take_due(
    session: Session, kind: JobKind, *, now: datetime, requeue_after: timedelta, limit: int = SWEEP_BATCH
) -> list[int]:
    """Mark and return the ids of the rows of ``kind`` whose message may be lost (see the module's docstring),
    oldest first; the caller sends them and commits. A row another sweeper took meanwhile is left out."""
    return _take(session, kind, _due(kind.row, now, requeue_after), now=now, limit=limit)


def take_lost(session: Session, kind: JobKind, *, now: datetime, limit: int = SWEEP_BATCH) -> list[int]:
    """After the broker lost its messages: mark and return the ids of the queued rows of ``kind`` stamped before
    ``now`` (whatever the broker held). Rows beyond ``limit`` are taken by the next sweeps, as
    their stamps are unconfirmed."""
    model = kind.row
    lost = and_(model.status == QUEUED, model.enqueued_at < now)
    taken = _take(session, kind, lost, now=now, limit=limit)
    # Beyond the limit: drop the confirmation, so that ``take_due`` takes them after ``SEND_GRACE``.
    session.execute(
        update(model)
        .where(lost, model.sent_at.is_not(None))
        .values(sent_at=null())
        .execution_options(synchronize_session=False)
    )
    return taken


def take_stranded(session: Session, kind: JobKind, delivered: Mapping[int, datetime], *, now: datetime) -> list[int]:
    """Mark and return the rows of ``delivered`` (row id: when a worker took its message) that are
    still ``queued`` and were not sent again since that delivery: the worker died before its claim
    committed (``app.worker.stranded``). Counted as ``resumed``."""
    if not delivered:
        return []
    model = kind.row
    not_sent_since = or_(
        *(
            and_(model.id == row_id, or_(model.enqueued_at.is_(None), model.enqueued_at <= at))
            for row_id, at in delivered.items()
        )
    )
    condition = and_(model.status == QUEUED, not_sent_since)
    return _take(session, kind, condition, now=now, limit=len(delivered), worker_died=True)


def claimed_elsewhere(session: Session, kind: JobKind, delivered: Sequence[int]) -> tuple[set[int], bool]:
    """Of the rows named by deliveries a worker never acknowledged (``delivered``), those that no longer wait
    (another message claimed them: a message only wakes a worker, which claims the fairest row, see
    ``app.services.jobs.claiming``), and whether any row waits for a message at all. Such a delivery's worker
    may have died with it, and the row its message stood for is taken, so a row still waiting may have no
    message left: the sweeper sends one wake-up per such delivery while a row waits (a live worker's long
    job only costs a wake-up that finds nothing)."""
    if not delivered:
        return set(), False
    model = kind.row
    waiting = set(session.scalars(select(model.id).where(model.id.in_(delivered), model.status == QUEUED)))
    taken = set(delivered) - waiting
    if not taken:
        return set(), False
    anyone = select(model.id).where(model.status == QUEUED, model.sent_at == model.enqueued_at, on_platform(model))
    return taken, session.scalar(anyone.limit(1)) is not None


def count_wake_ups(session: Session, kind: JobKind, sent: int) -> None:
    """Count the wake-ups sent for deliveries whose row another message took (``claimed_elsewhere``)."""
    counters.bump(session, counters.RESENT, kind.name, sent)


def mark_sent(session: Session, jobs: Sequence[tuple[JobKind, int]], *, now: datetime, confirmed: bool) -> None:
    """Record that messages for these jobs are being sent now (before sending them): one ``UPDATE``
    per kind, however many rows (a phase's rescore). ``confirmed``: the queue cannot fail to take
    them (it lives in memory), so they count as sent at once."""
    rows: dict[JobRow, list[int]] = {}
    for kind, row_id in jobs:
        rows.setdefault(kind.row, []).append(row_id)
    for model, ids in rows.items():
        values = {"enqueued_at": now, "sent_at": now if confirmed else null()}
        session.execute(
            update(model).where(model.id.in_(ids)).values(**values).execution_options(synchronize_session=False)
        )


def confirm_sent(session: Session, kind: JobKind, row_ids: Sequence[int], *, marked_at: datetime | None) -> None:
    """The queue took the messages of these rows: their stamp set at ``marked_at`` (``None``: whatever
    stamp they have) is confirmed. A row stamped since by another sender keeps that stamp unconfirmed."""
    model = kind.row
    same = model.enqueued_at == marked_at if marked_at is not None else true()
    session.execute(
        update(model)
        .where(model.id.in_(row_ids), same)
        .values(sent_at=model.enqueued_at)
        .execution_options(synchronize_session=False)
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
