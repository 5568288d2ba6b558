"""A site admin deleting a user's account.

What boards must keep is kept under a placeholder, ``deleted user #N`` (N: the account's number); everything
else of the user goes, in one transaction:

- the account's row stays as that placeholder, with no email, no password (nothing verifies against its hash,
  and no reset link is issued for it), no roles: the name it showed is gone. The row stays because pages and
  the API name people through it (a kept submission's uploader, a team member of a revealed board, a phase
  change's author), and because its number must never name anyone else: a browser session's signed cookie
  carries it, and SQLite hands the highest number out again once its row is deleted;
- every browser session ends (``session_version`` is bumped) and every API token and reset link is deleted,
  at once: the next request of any of them is anonymous;
- its roles go: organizer of competitions (site admins still run those), participant requests, and the keys
  that made its uploads idempotent;
- each team of the user: a team with other members loses the user, unless a revealed board's final ranking
  shows the team (``submissions.deletion.kept_for_record``), whose membership is kept for the record; the team's
  submissions are its other members' too and stay, the user's uploads among them under the placeholder. A
  team of the user alone loses every submission but those a revealed final ranking shows; with none of those
  the team goes too, else it stays under the placeholder's name (a team of one is often named after its member).

Refused while a worker holds a submission that would go (being scored, or its code being run): ask again once
it ended. An admin does not delete their own account this way (the site would risk losing its last admin).
The files' contents stay in the blob store until nothing refers to them (``app.storage.collect``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.services.accounts.access import require_user
from app.services.accounts.users import end_sessions, get_user, revoke_all_tokens
from app.services.errors import Conflict, Forbidden
from app.services.submissions.deletion import being_run, kept_for_record, remove
from app.storage.models import (
    CompetitionOrganizer,
    IdempotencyKey,
    Participant,
    PasswordReset,
    Phase,
    Submission,
    Team,
    TeamMember,
    User,
)
from app.storage.models.accounts import DELETED_PASSWORD, deleted_name, team_name_key

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UserRemoved:
    """What deleting an account did."""

    user: str
    teams_left: int
    teams_deleted: int
    memberships_kept: int
    submissions_deleted: int
    submissions_kept: int
    tokens_revoked: int


@dataclass
class _Tally:
    left: int = 0
    deleted: int = 0
    kept: int = 0
    submissions: int = 0
    submissions_kept: int = 0


def _kept_of(session: Session, team_id: int) -> set[int]:
    """The team's submissions that a revealed board's final ranking shows."""
    phases = session.scalars(
        select(Phase)
        .where(
            Phase.revealed_at.is_not(None),
            Phase.id.in_(select(Submission.phase_id).where(Submission.team_id == team_id)),
        )
        .order_by(Phase.id)
    )
    submitted = set(session.scalars(select(Submission.id).where(Submission.team_id == team_id)))
    return {n for phase in phases for n in kept_for_record(session, phase) if n in submitted}


def _rename(session: Session, team: Team, name: str) -> None:
    """Give the team ``name``, or ``name`` with its number should another team of the competition hold it."""
    taken = session.scalar(
        select(Team.id).where(
            Team.competition_id == team.competition_id, Team.name_key == team_name_key(name), Team.id != team.id
        )
    )
    team.name = name if taken is None else f"{name} (team {team.id})"


def _leave_teams(session: Session, user: User, tally: _Tally) -> None:
    memberships = list(session.scalars(select(TeamMember).where(TeamMember.user_id == user.id).with_for_update()))
    plans = []
    for membership in memberships:
        team = session.get_one(Team, membership.team_id)
        others = session.scalar(
            select(func.count()).where(TeamMember.team_id == team.id, TeamMember.user_id != user.id)
        )
        submissions = list(session.scalars(select(Submission).where(Submission.team_id == team.id).with_for_update()))
        kept = _kept_of(session, team.id)
        going = [] if others else [s for s in submissions if s.id not in kept]
        if busy := sorted(being_run(session, (s.id for s in going))):
            raise Conflict(
                f"a worker is running submission {busy[0]} of the user's team {team.name!r}: delete the account "
                "once it ended",
                code="user_busy",
            )
        plans.append((team, bool(others), going, kept))
    for team, others, going, kept in plans:
        if others and not kept:  # the team goes on without the user
            session.execute(delete(TeamMember).where(TeamMember.team_id == team.id, TeamMember.user_id == user.id))
            tally.left += 1
        elif not kept:  # the user's own team, of which nothing is kept: its rows cascade
            tally.submissions += len(going)
            session.execute(delete(Team).where(Team.id == team.id))
            tally.deleted += 1
        else:
            tally.submissions += remove(session, going)
            tally.submissions_kept += len(kept)
            tally.kept += 1
            if not others:
                _rename(session, team, deleted_name(user.id))


def delete_user(session: Session, admin: User | None, name: str) -> UserRemoved:
    """Delete the account ``name`` as the module says (site admins)."""
    admin = require_user(admin)
    if not admin.is_admin:
        raise Forbidden("only site admins may delete accounts")
    user = get_user(session, name)
    if user.id == admin.id:
        raise Conflict("you cannot delete your own account; another site admin can", code="own_account")
    return delete_account(session, user, by=admin.name)


def delete_account(session: Session, user: User, *, by: str) -> UserRemoved:
    """Delete ``user``'s account as the module says; ``by`` names who did, for the log (``podium user delete``
    runs on the server's machine, with no account of its own)."""
    if user.is_deleted:
        raise Conflict(f"{user.name!r} is a deleted account already", code="already_deleted")
    session.refresh(user, with_for_update=True)
    tally = _Tally()
    _leave_teams(session, user, tally)
    for model in (CompetitionOrganizer, Participant, IdempotencyKey, PasswordReset):
        session.execute(delete(model).where(model.user_id == user.id))
    tokens = revoke_all_tokens(session, user)
    end_sessions(session, user)
    was = user.name
    user.name = deleted_name(user.id)
    user.email = None
    user.password_hash = DELETED_PASSWORD
    user.is_admin = user.is_organizer = False
    session.flush()
    log.info("%s deleted the account of %r (now %r)", by, was, user.name)
    return UserRemoved(
        user=user.name,
        teams_left=tally.left,
        teams_deleted=tally.deleted,
        memberships_kept=tally.kept,
        submissions_deleted=tally.submissions,
        submissions_kept=tally.submissions_kept,
        tokens_revoked=tokens,
    )
