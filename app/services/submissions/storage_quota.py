"""Storage quotas: the most bytes a competition's submissions, and each team's, may take.

A competition sets them (``storage_quota_bytes``, ``team_storage_quota_bytes`` in its bundle), else the
operator's defaults apply (``PODIUM_STORAGE_QUOTA_BYTES``, ``PODIUM_TEAM_STORAGE_QUOTA_BYTES``; 0: none).
What counts is what was uploaded: every submission's size as sent (a file sent twice counts twice, as the
usage page's "uploaded" says), baselines excepted; a deleted submission no longer counts.

An upload is refused before it is stored: once cheaply before it is parsed, and again while its transaction
holds the lock of the competition's row (where the competition has a quota) and of the team's row (where
teams have one), so that two uploads can never both take the last bytes: ``lock`` takes them, in that
order, before the team's phase entry (``quota.lock_entry``), and every uploader takes them in that order.
The locks are ``FOR NO KEY UPDATE``: they exclude each other but not the key-share locks that inserting a
row referring to the competition or the team takes (a ``FOR UPDATE`` there deadlocks two first uploads).
On SQLite the write transaction already holds the database's write lock (``app.storage.db``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.services.errors import StorageQuotaExceeded
from app.services.submissions.limits import Limits, describe_size
from app.storage.models import Competition, Phase, Submission, Task, Team


@dataclass(frozen=True)
class Quotas:
    competition: int | None
    team: int | None


def quotas(competition: Competition, limits: Limits | None) -> Quotas:
    """The quotas in force for the competition (None: no limit); without ``limits``, no operator's default."""
    return Quotas(
        competition.storage_quota_bytes or (limits.storage_quota_bytes if limits else 0) or None,
        competition.team_storage_quota_bytes or (limits.team_storage_quota_bytes if limits else 0) or None,
    )


def lock(session: Session, competition: Competition, team_id: int, limits: Limits) -> None:
    """Lock the rows whose quotas the upload will be counted against (competition first, then team)."""
    found = quotas(competition, limits)
    if found.competition is not None:
        session.execute(select(Competition.id).where(Competition.id == competition.id).with_for_update(key_share=True))
    if found.team is not None:
        session.execute(select(Team.id).where(Team.id == team_id).with_for_update(key_share=True))


def used(session: Session, competition_id: int, team_id: int | None) -> int:
    """The bytes the quotas count: the team's submissions, or (``team_id`` None) every team's."""
    phases = select(Phase.id).join(Task, Task.id == Phase.task_id).where(Task.competition_id == competition_id)
    query = select(func.coalesce(func.sum(Submission.size), 0)).where(
        Submission.phase_id.in_(phases), Submission.is_baseline.is_(False)
    )
    if team_id is not None:
        query = query.where(Submission.team_id == team_id)
    return int(session.scalar(query) or 0)


def check(session: Session, competition: Competition, team_id: int | None, size: int, limits: Limits) -> None:
    """Refuse an upload of ``size`` bytes that would take the team's or the competition's usage past its quota,
    naming the quota, what is used and the file's size."""
    found = quotas(competition, limits)
    checks = (("team", found.team, team_id), ("competition", found.competition, None))
    for name, limit, team in checks:
        if limit is None:
            continue
        # A user whose team is not made yet (its first upload) has stored nothing.
        taken = 0 if name == "team" and team is None else used(session, competition.id, team)
        if taken + size > limit:
            whose = "your team's submissions" if name == "team" else "the submissions of every team"
            raise StorageQuotaExceeded(
                f"the file ({describe_size(size)}) does not fit the {name} storage quota of {competition.slug!r}: "
                f"{whose} take {describe_size(taken)} of {describe_size(limit)}; delete a submission you no longer "
                "need to make room",
                quota=name,
                limit=limit,
                used=taken,
                size=size,
            )
