"""An organizer (or a site admin) deleting a whole competition.

Everything of it goes in one transaction, through the foreign keys' ``ON DELETE CASCADE``: its tasks and
phases with their files, golds' and inputs' references, teams and their members, participants, organizers'
roles, submissions with their scores, code runs, program runs and logs, baseline runs, the phases' change
history, the counts of deleted submissions, its worker queues with their credentials (a remote worker's key
stops working at once) and the phases' routes to them. Its boards go with the phases (the cached ones are
dropped as the deletion commits: ``boards.staleness`` sees the statement).

Nothing of it is kept in the database: a competition's record is its boards, and whoever deletes the
competition deletes that record on purpose. The server's log says who deleted which competition, with how
many submissions and teams. The files' contents stay in the blob store until nothing refers to them (another
competition may hold the same file): ``podium storage collect`` and the sweeper remove the rest.

Refused while a worker holds one of its submissions or runs (being scored, its code or a baseline being run):
the job would write to rows that are gone; ask again once it ended. Queued ones go: no worker holds them, and
the worker a message wakes finds nothing to claim.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.services.accounts.access import require_organizer
from app.services.competitions.catalog import get_competition
from app.services.errors import Conflict
from app.services.submissions.deletion import being_run
from app.storage.models import BaselineRun, Competition, Phase, RunStatus, Submission, Task, Team, User

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompetitionRemoved:
    """What went with a deleted competition."""

    competition: str
    phases: int
    submissions: int
    teams: int


def delete_competition(session: Session, user: User | None, slug: str) -> CompetitionRemoved:
    """Delete the competition and everything of it (its organizers and site admins; see the module)."""
    competition = get_competition(session, slug)
    organizer = require_organizer(session, user, competition)
    # The competition's row first, then its submissions and runs, all locked: no upload's quota check, no
    # worker's claim interleaves (on SQLite the write transaction holds the database's lock already).
    session.scalar(select(Competition.id).where(Competition.id == competition.id).with_for_update())
    phase_ids = list(
        session.scalars(
            select(Phase.id).join(Task, Task.id == Phase.task_id).where(Task.competition_id == competition.id)
        )
    )
    submission_ids = list(
        session.scalars(select(Submission.id).where(Submission.phase_id.in_(phase_ids)).with_for_update())
    )
    runs = list(
        session.scalars(
            select(BaselineRun.id)
            .where(BaselineRun.phase_id.in_(phase_ids), BaselineRun.status == RunStatus.RUNNING)
            .with_for_update()
        )
    )
    busy = sorted(being_run(session, submission_ids))
    if busy or runs:
        held = [f"submission {n}" for n in busy[:5]] + [f"baseline run {n}" for n in runs[:5]]
        raise Conflict(
            f"a worker is running {', '.join(held)}{' and more' if len(busy) + len(runs) > len(held) else ''} of "
            f"{slug!r}: delete the competition once those ended",
            code="competition_busy",
        )
    teams = session.scalar(select(func.count(Team.id)).where(Team.competition_id == competition.id)) or 0
    session.execute(delete(Competition).where(Competition.id == competition.id))
    session.expunge(competition)
    log.info(
        "%s deleted competition %r: %d phases, %d submissions, %d teams",
        organizer.name,
        slug,
        len(phase_ids),
        len(submission_ids),
        teams,
    )
    return CompetitionRemoved(slug, len(phase_ids), len(submission_ids), teams)
