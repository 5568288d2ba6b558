"""What every expensive job does first and when it fails: claim the fairest waiting row, and fail it once.

A job's message names one row, but it only wakes a worker: ``claim_next`` claims the first row in the fair
order (``app.services.jobs.fair``) among those whose message is out, which is the named row itself when
nothing else waits. The claim is the lease's compare-and-set (``lease.take``, through the kind's own claim
step); on PostgreSQL a row another worker is claiming right now is skipped (``FOR UPDATE SKIP LOCKED``)
instead of waited for. Nothing is lost or run twice:

- each message claims at most one row, and each waiting row has a message on its way: when a message claims
  another row than its own, the other row's message is still out and now stands for it, so the named row is
  stamped as sent again (which also tells the Redis sweeper that this delivery is no stranded one);
- a row whose message may not be out is left to the message that names it: a stamp never confirmed (the
  sender may have died before its send; the sweeper sends it), or a row running with an expired lease that
  no sweeper sent again yet (a message left over from before would resume it in another row's place);
- a row claimed by two messages at once is taken by one: the claim is still ``lease.take``.

``failing`` is the other half every job shares: a step that gave up on transient errors fails the row with
``JobContext.give_up``; a known error of the job fails it with the job's wording; anything else with its
traceback for the organizers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TypeVar

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.orm import Session

from app.services.jobs import fair
from app.services.jobs.kinds import JobContext, JobKind
from app.services.jobs.lease import QUEUED, RUNNING, JobRow
from app.services.jobs.retry import GaveUp, error_text
from app.services.jobs.routing import on_platform
from app.storage.types import utcnow

log = logging.getLogger(__name__)

C = TypeVar("C", covariant=True)
T = TypeVar("T")

#: How many times a claim looks at the head of the order again after other workers took all of it.
ROUNDS = 6
#: The wait before the next look, where a row of the head was locked by another transaction (seconds, doubled
#: each round up to the last). The holder need not be a worker: on PostgreSQL an organizer's rescore refused
#: because another one just queued the row keeps its lock until its request ends, and a worker that skipped the row
#: then and gave up left it queued with no message until the sweeper's next pass.
LOCKED_WAIT = (0.05, 0.5)


class ClaimStep(Protocol[C]):
    """A kind's claim of one row (``scoring.steps.claim``, ``code.execution.claim``, ...): its hold on
    the row, or ``None`` when the row is not waiting (or was failed for too many attempts)."""

    def __call__(
        self, session: Session, row_id: int, /, *, worker: str, now: datetime, lease_seconds: int, max_attempts: int
    ) -> C | None: ...


def eligible(model: JobRow, named: int, now: datetime) -> ColumnElement[bool]:
    """Rows a message naming ``named`` may claim: see the module's docstring. Never a row that a competition's
    own queue serves (``routing.on_platform``)."""
    own_or_sent = or_(model.id == named, model.sent_at == model.enqueued_at)
    expired = and_(model.status == RUNNING, model.lease_expires_at < now)
    return and_(
        or_(model.status == QUEUED, and_(expired, model.enqueued_at >= model.lease_expires_at)),
        own_or_sent,
        on_platform(model),
    )


def claim_first(
    session: Session,
    model: JobRow,
    now: datetime,
    eligible: ColumnElement[bool],
    among: ColumnElement[bool],
    claim: Callable[[Session, int], T | None],
) -> tuple[int, T] | None:
    """In the caller's transaction: ``claim`` the first row of the fair order (``fair.fairest`` over ``among``)
    that is ``eligible`` and not being claimed by another worker right now; the row's id and the claim, or
    ``None`` when nothing can be claimed. The one claim loop of the platform's workers and of remote ones."""
    wait = LOCKED_WAIT[0]
    for _ in range(ROUNDS):
        head = fair.fairest(session, model, now, eligible, among=among)
        if not head:
            return None
        skipped = False
        for row_id in head:
            locked = select(model.id).where(model.id == row_id).with_for_update(skip_locked=True)
            if session.scalar(locked) is None:  # PostgreSQL: another transaction holds it (a worker claiming it)
                skipped = True
                continue
            held = claim(session, row_id)
            if held is not None:
                return row_id, held
        if skipped:  # a worker that claims it will have made it ineligible by the next look
            time.sleep(wait)
            wait = min(2 * wait, LOCKED_WAIT[1])
    return None


def claim_fairly(
    session: Session, kind: JobKind, named: int, now: datetime, claim: Callable[[Session, int], T | None]
) -> T | None:
    """In the caller's transaction: ``claim`` the fairest row a message naming ``named`` may take."""
    model = kind.row
    found = claim_first(session, model, now, eligible(model, named, now), on_platform(model), claim)
    if found is None:
        return None
    row_id, held = found
    if row_id != named:
        _stands_for(session, model, named, now)
    return held


def _stands_for(session: Session, model: JobRow, named: int, now: datetime) -> None:
    """The named row, still queued, is now waiting on the message of the row that was claimed instead."""
    session.execute(
        update(model)
        .where(model.id == named, model.status == QUEUED)
        .values(enqueued_at=now, sent_at=now)
        .execution_options(synchronize_session=False)
    )


def claim_next(
    ctx: JobContext,
    kind: JobKind,
    named: int,
    claim: ClaimStep[T],
    *,
    what: str,
    give_up: Callable[[Session, int, str], object],
) -> T | None:
    """Claim, for the message naming ``named``, the fairest waiting row of ``kind`` with the kind's ``claim``
    step, in a transaction retried after transient errors; ``None`` when nothing waits. If the database keeps
    failing, the named row is failed with ``give_up(session, row_id, reason)`` (a queued one only), the reason
    naming the row as ``what`` ("submission", "code run")."""
    settings = ctx.settings

    def step(session: Session) -> T | None:
        def one(s: Session, row_id: int) -> T | None:
            return claim(
                s,
                row_id,
                worker=ctx.worker,
                now=utcnow(),
                lease_seconds=settings.lease_seconds,
                max_attempts=settings.max_attempts,
            )

        return claim_fairly(session, kind, named, utcnow(), one)

    try:
        return ctx.retrying(kind)(f"claiming {what} {named}", lambda: ctx.write(step))
    except GaveUp as exc:
        ctx.give_up(kind, named, exc, lambda s, reason: give_up(s, named, reason), claimed=False)
        return None


@dataclass
class Attempt:
    """Whether the body of ``failing`` failed the row (the job then stops)."""

    failed: bool = False


@contextmanager
def failing(
    ctx: JobContext,
    kind: JobKind,
    row_id: int,
    fail: Callable[[Session, str], object],
    *,
    known: tuple[type[Exception], ...] = (),
    explain: Callable[[Exception], str] = str,
) -> Iterator[Attempt]:
    """Run the body; if it raises, fail the claimed row with ``fail(session, reason)`` once and swallow the
    error: after a step that gave up (``GaveUp``) with its reason, after one of the ``known`` errors with
    ``explain(error)``, after anything else with the traceback. ``attempt.failed`` says it happened."""
    attempt = Attempt()
    try:
        yield attempt
    except GaveUp as exc:
        attempt.failed = True
        ctx.give_up(kind, row_id, exc, fail, claimed=True)
    except known as exc:
        attempt.failed = True
        reason = explain(exc)
        ctx.record_failure(kind, row_id, lambda s: fail(s, reason))
    except Exception as exc:
        attempt.failed = True
        log.exception("%s %s failed", kind.name, row_id)
        reason = error_text(exc)
        ctx.record_failure(kind, row_id, lambda s: fail(s, reason))
