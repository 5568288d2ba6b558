"""Who may do what: organizers of a competition, site admins, and participants of approval-only ones."""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app.services.errors import Forbidden, NotAuthenticated
from app.storage.models import Competition, CompetitionOrganizer, Participant, Participation, User


def is_organizer(session: Session, user: User | None, competition_id: int) -> bool:
    """Whether ``user`` runs the competition (site admins run every competition)."""
    if user is None:
        return False
    if user.is_admin:
        return True
    query = select(
        exists().where(CompetitionOrganizer.competition_id == competition_id, CompetitionOrganizer.user_id == user.id)
    )
    return bool(session.scalar(query))


def require_user(user: User | None) -> User:
    if user is None:
        raise NotAuthenticated("log in first: send 'Authorization: Bearer <token>' (see POST /api/v1/tokens)")
    return user


def require_organizer(session: Session, user: User | None, competition: Competition) -> User:
    user = require_user(user)
    if not is_organizer(session, user, competition.id):
        raise Forbidden(f"only the organizers of {competition.slug!r} may do this")
    return user


def require_creator(user: User | None) -> User:
    """Creating competitions is for site admins and users with the organizer role."""
    user = require_user(user)
    if not (user.is_admin or user.is_organizer):
        raise Forbidden("only organizers and site admins may create competitions")
    return user


def _request(session: Session, user: User, competition: Competition) -> tuple[bool, bool]:
    """Whether the user's request to take part was approved, and whether it was refused."""
    row = session.execute(
        select(Participant.approved_at, Participant.refused_at).where(
            Participant.competition_id == competition.id, Participant.user_id == user.id
        )
    ).one_or_none()
    return (False, False) if row is None else (row.approved_at is not None, row.refused_at is not None)


def may_participate(session: Session, user: User, competition: Competition) -> bool:
    """Anyone may take part in an ``open`` competition, unless an organizer refused them; an
    ``approval`` one needs an organizer's yes. Organizers always may."""
    if is_organizer(session, user, competition.id):
        return True
    approved, refused = _request(session, user, competition)
    return not refused and (competition.participation == Participation.OPEN or approved)


def require_participant(session: Session, user: User, competition: Competition) -> None:
    if may_participate(session, user, competition):
        return
    if _request(session, user, competition)[1]:
        raise Forbidden(f"the organizers of {competition.slug!r} declined your taking part")
    raise Forbidden(
        f"taking part in {competition.slug!r} needs an organizer's approval; "
        f"ask for it with POST /api/v1/competitions/{competition.slug}/participation"
    )
