"""Submission limits per team and phase: per UTC day and in total.

A submission counts unless the platform failed it (``quota_refunded``) or it is a baseline run; one its team
deleted still counts (``DeletedSubmission``).
Counting and adding must not interleave between two uploads of one team, or both could take the
last slot: ``lock_entry`` locks the team's ``PhaseEntry`` row (``SELECT ... FOR UPDATE`` on
PostgreSQL; on SQLite the write transaction already holds the database's write lock, see
``app.storage.db``), and the count is taken again under that lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.services.errors import QuotaExhausted
from app.storage.models import DeletedSubmission, Phase, PhaseEntry, Submission


@dataclass(frozen=True)
class QuotaUsage:
    """How much of a team's allowance in a phase is used, and when the daily part resets."""

    daily_limit: int | None
    daily_used: int
    total_limit: int | None
    total_used: int
    resets_at: datetime

    @property
    def daily_left(self) -> int | None:
        return None if self.daily_limit is None else max(0, self.daily_limit - self.daily_used)

    @property
    def total_left(self) -> int | None:
        return None if self.total_limit is None else max(0, self.total_limit - self.total_used)


def day_bounds(now: datetime) -> tuple[datetime, datetime]:
    """The UTC day holding ``now``: its midnight and the next one."""
    start = datetime.combine(now.date(), time(0, 0), tzinfo=now.tzinfo)
    return start, start + timedelta(days=1)


def usage(session: Session, phase: Phase, team_id: int | None, now: datetime) -> QuotaUsage:
    """The team's counted submissions in the phase; a team that does not exist yet has used none."""
    day_start, day_end = day_bounds(now)
    daily = total = 0
    if team_id is not None:
        counted = (
            select(func.count())
            .select_from(Submission)
            .where(
                Submission.phase_id == phase.id,
                Submission.team_id == team_id,
                Submission.quota_refunded.is_(False),
                Submission.is_baseline.is_(False),
            )
        )
        # A submission its team deleted still counts (it was scored; deleting must not give more tries).
        deleted = (
            select(func.count())
            .select_from(DeletedSubmission)
            .where(DeletedSubmission.phase_id == phase.id, DeletedSubmission.team_id == team_id)
        )
        total = (session.scalar(counted) or 0) + (session.scalar(deleted) or 0)
        daily = (session.scalar(counted.where(Submission.created_at >= day_start)) or 0) + (
            session.scalar(deleted.where(DeletedSubmission.submitted_at >= day_start)) or 0
        )
    return QuotaUsage(phase.daily_limit, daily, phase.total_limit, total, day_end)


def check(used: QuotaUsage, phase_slug: str) -> None:
    """Refuse when no submission is left, saying which limit and when it resets."""
    if used.total_left == 0:
        raise QuotaExhausted(
            f"your team has used all {used.total_limit} submissions allowed in phase {phase_slug!r}; "
            "this limit does not reset",
            resets_at=None,
        )
    if used.daily_left == 0:
        at = used.resets_at.strftime("%Y-%m-%d %H:%M UTC")
        raise QuotaExhausted(
            f"your team has used all {used.daily_limit} submissions allowed per day in phase {phase_slug!r}; "
            f"the daily limit resets at {at}",
            resets_at=used.resets_at,
        )


def lock_entry(session: Session, phase_id: int, team_id: int) -> PhaseEntry:
    """Lock (creating it if needed) the row that serializes the team's uploads to the phase."""
    query = select(PhaseEntry).where(PhaseEntry.phase_id == phase_id, PhaseEntry.team_id == team_id)
    entry = session.scalar(query.with_for_update())
    if entry is not None:
        return entry
    try:
        with session.begin_nested():  # another upload may create it first; then lock theirs
            session.add(PhaseEntry(phase_id=phase_id, team_id=team_id))
    except IntegrityError:
        pass
    entry = session.scalar(query.with_for_update())
    assert entry is not None
    return entry
