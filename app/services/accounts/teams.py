"""Teams: who submits together. Limits are counted per team; a user who submits without a team
gets a team of one, named after them, created on the spot.

A team's founder (its earliest remaining member) may rename it and remove members; any member of a team
of several may leave it. The allowance stays with the team and its submissions: a user who submitted for
a team and is no longer in it may only rejoin that team in the competition (never found one, join
another or get a fresh team of one), so leaving and coming back never resets a limit.

Team names are unique per competition as people see them: compared by ``Team.name_key``, their
confusable skeleton (``team_name_key``: Unicode TS #39, NFKC, casefolded), which a unique index holds,
so ``vіctim`` with a Cyrillic ``і`` cannot pose as ``victim``, nor ``Équipe`` as ``équipe``, on every
database. A name too similar to another team's is refused with a 409 naming that team. Two creations
(or renames) to one name at once both pass the check; the index refuses the second, and that refusal
is the same 409 as the check's.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.services.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.storage.models import Competition, Submission, Team, TeamMember, User
from app.storage.models.accounts import MAX_TEAM_NAME_KEY, team_name_key

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


def founder(session: Session, team: Team) -> User | None:
    """Who may rename the team and remove members: its earliest remaining member."""
    found = members(session, team)
    return found[0] if found else None


def _holder(session: Session, competition_id: int, name: str, *, besides: int | None = None) -> Team | None:
    """The team whose name looks like ``name`` (has its key) in the competition, other than ``besides``."""
    clause = [Team.competition_id == competition_id, Team.name_key == team_name_key(name)]
    if besides is not None:
        clause.append(Team.id != besides)
    return session.scalar(select(Team).where(*clause).limit(1))


def _name_taken(session: Session, competition_id: int, name: str, *, besides: int | None = None) -> bool:
    return _holder(session, competition_id, name, besides=besides) is not None


def _checked_name(name: str) -> str:
    """The name without surrounding blanks, refused when empty, too long, or holding a NUL."""
    name = name.strip()
    problem = None
    if not 1 <= len(name) <= MAX_TEAM_NAME:
        problem = f"1 to {MAX_TEAM_NAME} characters"
    elif "\x00" in name:
        problem = "contains a NUL character"
    elif len(team_name_key(name)) > MAX_TEAM_NAME_KEY:
        problem = "too long once its characters are normalized"
    elif not team_name_key(name):
        problem = "has no visible letters, digits or signs"
    if problem:
        raise InvalidInput("invalid team name", [{"where": "name", "message": problem}])
    return name


@contextmanager
def _unique_name(session: Session, competition: Competition, name: str, besides: int | None = None) -> Iterator[None]:
    """Check that ``name`` is free, then run the block that takes it; the unique index refusing it
    (another request took it in between) is the same 409."""
    holder = _holder(session, competition.id, name, besides=besides)
    if holder is not None:
        raise _taken(name, holder, competition)
    try:
        with session.begin_nested():
            yield
    except IntegrityError:
        holder = _holder(session, competition.id, name, besides=besides)
        if holder is not None:
            raise _taken(name, holder, competition) from None
        raise


def _taken(name: str, holder: Team, competition: Competition) -> Conflict:
    if holder.name.casefold() == name.casefold():
        return Conflict(f"the team name {name!r} is taken in {competition.slug!r}", code="name_taken")
    return Conflict(
        f"the team name {name!r} is too similar to the name of the team {holder.name!r} in {competition.slug!r}"
        " (names that look alike are one name)",
        code="name_taken",
    )


def _refuse_if_bound(session: Session, user: User, competition_id: int, joining: int | None = None) -> None:
    """A user who submitted for a team they are no longer in stays bound to it (its allowance included)."""
    query = (
        select(Team)
        .join(Submission, Submission.team_id == Team.id)
        .where(Team.competition_id == competition_id, Submission.user_id == user.id)
    )
    if joining is not None:
        query = query.where(Team.id != joining)
    bound = session.scalar(query.limit(1))
    if bound is not None and team_of(session, user, competition_id) is None:
        raise Conflict(
            f"you submitted for the team {bound.name!r} in this competition; its submissions and allowance stay "
            "with it, so you may only rejoin it (with its invite code)",
            code="bound_to_team",
        )


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
    _refuse_if_bound(session, user, competition_id)
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
    name = _checked_name(name)
    _refuse_if_bound(session, user, competition.id)
    _leave_solo_team(session, user, competition.id)
    with _unique_name(session, competition, name):
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
    _refuse_if_bound(session, user, competition.id, joining=team.id)
    _leave_solo_team(session, user, competition.id)
    _add_member(session, team, user)
    return team


def _own_team(session: Session, user: User, competition: Competition) -> Team:
    team = team_of(session, user, competition.id)
    if team is None:
        raise NotFound(f"you are not in a team of {competition.slug!r}")
    return team


def _as_founder(session: Session, user: User, team: Team, doing: str) -> None:
    first = founder(session, team)
    if first is None or first.id != user.id:
        raise Forbidden(f"only the team's founder ({first.name if first else 'nobody'}) may {doing}")


def rename_team(session: Session, user: User, competition: Competition, name: str) -> Team:
    """Rename the user's team (its founder only); names stay unique in the competition, whatever their case."""
    team = _own_team(session, user, competition)
    _as_founder(session, user, team, "rename it")
    name = _checked_name(name)
    with _unique_name(session, competition, name, besides=team.id):
        team.name = name
        session.flush()
    return team


def _drop_member(session: Session, team: Team, user: User) -> None:
    """Take ``user`` out of ``team``; a team left empty that never submitted goes too (its name is free again)."""
    membership = session.get(TeamMember, (team.id, user.id))
    if membership is not None:
        session.delete(membership)
        session.flush()
    if not members(session, team) and not session.scalar(select(exists().where(Submission.team_id == team.id))):
        session.delete(team)
        session.flush()


def leave_team(session: Session, user: User, competition: Competition) -> Team:
    """Leave the user's team of several (a team of one is the user's own). The team keeps its submissions
    and what they count against its limits; returns the team left."""
    team = _own_team(session, user, competition)
    if team.is_solo:
        raise Conflict("a team of one cannot be left: it is your own entry", code="solo_team")
    _drop_member(session, team, user)
    return team


def remove_member(session: Session, user: User, competition: Competition, member_name: str) -> Team:
    """The founder takes ``member_name`` out of the team (to leave it yourself, leave it). The team gets a new
    invite code, so the member comes back only if invited again."""
    team = _own_team(session, user, competition)
    _as_founder(session, user, team, "remove members")
    member = next((m for m in members(session, team) if m.name == member_name), None)
    if member is None:
        raise NotFound(f"{member_name!r} is not a member of your team")
    if member.id == user.id:
        raise Conflict("to take yourself out of the team, leave it", code="remove_yourself")
    _drop_member(session, team, member)
    team.invite_code = secrets.token_urlsafe(12)
    session.flush()
    return team
