"""How much a competition stores: files and bytes per team and per user, and in all (organizers and admins).

Counts come from the rows alone (``blobs.size``, ``submissions.size``), never from the store, so they
cost one query each whatever the store. Two views of the same files:

- what was *uploaded*: every submission counts with its size, as its team and its uploader sent it (a
  team that sends the same file twice has sent it twice), baselines under no team;
- what is *stored*: the distinct blobs the competition refers to (its golds, its task and phase files,
  its code phases' inputs, the submissions' files, the programs of code runs), each once, since the
  store keeps each content once. A blob shared with another competition counts in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, union
from sqlalchemy.orm import Session

from app.services.accounts.access import require_organizer
from app.services.competitions.catalog import get_competition
from app.services.submissions import storage_quota
from app.services.submissions.limits import Limits
from app.storage.models import Blob, CodeRun, Phase, PhaseFile, Submission, Task, TaskFile, Team, User


@dataclass(frozen=True)
class Amount:
    files: int
    bytes: int


@dataclass(frozen=True)
class Holder:
    """A team's or a user's uploads."""

    name: str
    files: int
    bytes: int


@dataclass(frozen=True)
class Usage:
    competition: str
    #: Every submission's file as it was sent (baselines included).
    uploaded: Amount
    #: The distinct contents the competition refers to, each once: what it takes in the blob store.
    stored: Amount
    #: The organizers' files (golds, task and phase files, code phases' inputs), distinct.
    competition_files: Amount
    teams: list[Holder]
    users: list[Holder]
    #: The storage quotas in force (``services.submissions.storage_quota``; None: no limit), and what the
    #: competition's quota counts (every team's submissions, baselines excepted).
    quota_bytes: int | None = None
    team_quota_bytes: int | None = None
    quota_used_bytes: int = 0


def _amount(session: Session, blob_ids: list[Any]) -> Amount:
    ids = union(*blob_ids).subquery()
    row = session.execute(
        select(func.count(Blob.id), func.coalesce(func.sum(Blob.size), 0)).where(Blob.id.in_(select(ids.c[0])))
    ).one()
    return Amount(int(row[0]), int(row[1]))


def competition_usage(session: Session, user: User | None, slug: str, limits: Limits | None = None) -> Usage:
    """The competition's usage, with its quotas (the operator's defaults from ``limits``); its organizers and
    site admins only."""
    competition = get_competition(session, slug)
    require_organizer(session, user, competition)
    tasks = select(Task.id).where(Task.competition_id == competition.id)
    phases = select(Phase.id).where(Phase.task_id.in_(tasks))
    submissions = select(Submission).where(Submission.phase_id.in_(phases)).subquery()
    own = [
        select(Phase.gold_blob_id).where(Phase.id.in_(phases)),
        select(Phase.code_inputs_blob_id).where(Phase.id.in_(phases), Phase.code_inputs_blob_id.is_not(None)),
        select(TaskFile.blob_id).where(TaskFile.task_id.in_(tasks)),
        select(PhaseFile.blob_id).where(PhaseFile.phase_id.in_(phases)),
    ]
    sent = [
        select(submissions.c.blob_id),
        select(CodeRun.program_blob_id).where(CodeRun.submission_id.in_(select(submissions.c.id))),
    ]
    uploaded = session.execute(
        select(func.count(submissions.c.id), func.coalesce(func.sum(submissions.c.size), 0))
    ).one()

    def per(name: Any, key: Any, column: Any) -> list[Holder]:
        total = func.sum(submissions.c.size)
        rows = session.execute(
            select(name, func.count(submissions.c.id), total)
            .join_from(submissions, key.class_, key == column)
            .group_by(name)
            .order_by(total.desc(), name)
        ).all()
        return [Holder(str(n), int(files), int(size)) for n, files, size in rows]

    quotas = storage_quota.quotas(competition, limits)
    return Usage(
        quota_bytes=quotas.competition,
        team_quota_bytes=quotas.team,
        quota_used_bytes=storage_quota.used(session, competition.id, None),
        competition=competition.slug,
        uploaded=Amount(int(uploaded[0]), int(uploaded[1])),
        stored=_amount(session, own + sent),
        competition_files=_amount(session, own),
        teams=per(Team.name, Team.id, submissions.c.team_id),
        users=per(User.name, User.id, submissions.c.user_id),
    )
