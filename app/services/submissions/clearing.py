"""An organizer deleting a phase's submissions: every one of them, or one team's.

Left in place, and named in the answer so that the organizer knows what stayed:

- a submission a revealed board's final ranking shows (``deletion.kept_for_record``): that ranking is the
  competition's record;
- a submission a worker holds right now (being scored, or its code being run): its job would write to rows
  that are gone (ask again once it ended). A queued one goes: no worker holds it, and the worker its message
  wakes finds nothing to claim.

Baseline runs' submissions go too when every submission is deleted (they are the organizers' own). What goes
still counts against its team's daily and total limits (``DeletedSubmission``), as when a team deletes its own:
deleting must not give a team more tries at the test set. The files' contents stay in the blob store until
nothing refers to them (``app.storage.collect``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.accounts.access import require_organizer
from app.services.errors import NotFound
from app.services.submissions.deletion import being_run, kept_for_record, remove
from app.storage.models import Phase, Submission, Team, User
from app.storage.models.accounts import team_name_key

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Cleared:
    """What deleting a phase's submissions did: how many went, and which stayed and why."""

    deleted: int
    kept_for_record: list[int]
    busy: list[int]


def team_named(session: Session, phase: Phase, team: str) -> int:
    """The id of the phase's competition's team named ``team`` (names compare as team names do)."""
    named = select(Team.id).where(Team.competition_id == phase.task.competition_id)
    team_id = session.scalar(named.where(Team.name_key == team_name_key(team)))
    if team_id is None:
        raise NotFound(f"there is no team named {team!r} in {phase.task.competition.slug!r}", code="no_such_team")
    return team_id


def delete_phase_submissions(session: Session, user: User | None, phase: Phase, team: str | None = None) -> Cleared:
    """Delete the phase's submissions (only ``team``'s, when named) but those the module keeps (organizers)."""
    organizer = require_organizer(session, user, phase.task.competition)
    query = select(Submission).where(Submission.phase_id == phase.id).order_by(Submission.id)
    if team is not None:
        query = query.where(Submission.team_id == team_named(session, phase, team))
    # Locked, so that no worker claims one of them between the check below and the deletion (on SQLite the
    # write transaction holds the database's lock already).
    submissions = list(session.scalars(query.with_for_update()))
    kept = kept_for_record(session, phase)
    busy = being_run(session, (s.id for s in submissions))
    going = [s for s in submissions if s.id not in kept and s.id not in busy]
    deleted = remove(session, going)
    log.info(
        "%s deleted %d submissions of phase %s%s",
        organizer.name,
        deleted,
        phase.id,
        f" (team {team!r})" if team else "",
    )
    return Cleared(
        deleted=deleted,
        kept_for_record=sorted(s.id for s in submissions if s.id in kept),
        busy=sorted(s.id for s in submissions if s.id in busy and s.id not in kept),
    )
