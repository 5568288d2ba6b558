"""Teams: who submits together. Limits are counted per team; a user who submits without a team
gets a team of one, named after them, created on the spot."""

from __future__ import annotations

import secrets

from sqlalchemy import exists, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.services.errors import Conflict, InvalidInput, NotFound
from app.storage.models import Competition, Submission, Team, TeamMember, User

MAX_TEAM_NAME = 100


def team_of(session: Session, user: User, competition_id: int) -> Team | None:
    query = (
        select(Team)
        .join(TeamMember, TeamMember.team_id == Team.id)
        .where(TeamMember.competition_id == competition_id, TeamMember.user_id == user.id)
    )
    return session.scalar(query)


def members(session: Session, team: Team) -> list[User]:
    query = select(User).join(TeamMember, TeamMember.user_id == User.id).where(TeamMember.team_id == team.id)
    return list(session.scalars(query.order_by(TeamMember.joined_at, User.id)))


def _name_taken(session: Session, competition_id: int, name: str) -> bool:
    query = select(exists().where(Team.competition_id == competition_id, func.lower(Team.name) == name.lower()))
    return bool(session.scalar(query))


def _new_team(session: Session, competition_id: int, name: str, *, solo: bool) -> Team:
    team = Team(competition_id=competition_id, name=name, invite_code=secrets.token_urlsafe(12), is_solo=solo)
    session.add(team)
    session.flush()
    return team


def _add_member(session: Session, team: Team, user: User) -> None:
    session.add(TeamMember(team_id=team.id, user_id=user.id, competition_id=team.competition_id))
    session.flush()


def ensure_team(session: Session, user: User, competition_id: int) -> Team:
    """The user's team in the competition, or a new team of one named after the user.

    Two first uploads of one user may race to create the team; the loser's insert fails on the
    unique membership and it takes the winner's team instead.
    """
    team = team_of(session, user, competition_id)
    if team is not None:
        return team
    name, n = user.name, 1
    while _name_taken(session, competition_id, name):
        n += 1
        name = f"{user.name}-{n}"
    try:
        with session.begin_nested():
            team = _new_team(session, competition_id, name, solo=True)
            _add_member(session, team, user)
    except IntegrityError:
        team = team_of(session, user, competition_id)
        if team is None:
            raise
    return team


def _leave_solo_team(session: Session, user: User, competition_id: int) -> None:
    """Before joining or founding a team: drop the user's team of one if it never submitted."""
    current = team_of(session, user, competition_id)
    if current is None:
        return
    if not current.is_solo:
        raise Conflict(f"you are already in the team {current.name!r}", code="already_in_team")
    if session.scalar(select(exists().where(Submission.team_id == current.id))):
        raise Conflict(
            f"you have submitted as the team of one {current.name!r}; its submissions cannot move to another team",
            code="already_in_team",
        )
    session.delete(current)
    session.flush()


def create_team(session: Session, user: User, competition: Competition, name: str) -> Team:
    """A new team founded by ``user``, who becomes its first member."""
    name = name.strip()
    if not 1 <= len(name) <= MAX_TEAM_NAME:
        raise InvalidInput("invalid team name", [{"where": "name", "message": f"1 to {MAX_TEAM_NAME} characters"}])
    _leave_solo_team(session, user, competition.id)
    if _name_taken(session, competition.id, name):
        raise Conflict(f"the team name {name!r} is taken in {competition.slug!r}", code="name_taken")
    team = _new_team(session, competition.id, name, solo=False)
    _add_member(session, team, user)
    return team


def join_team(session: Session, user: User, competition: Competition, invite_code: str) -> Team:
    """Join the team whose invite code this is."""
    team = session.scalar(select(Team).where(Team.invite_code == invite_code, Team.competition_id == competition.id))
    if team is None or team.is_solo:
        raise NotFound(f"no team of {competition.slug!r} has this invite code")
    current = team_of(session, user, competition.id)
    if current is not None and current.id == team.id:
        return team
    _leave_solo_team(session, user, competition.id)
    _add_member(session, team, user)
    return team
