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


def may_participate(session: Session, user: User, competition: Competition) -> bool:
    """Anyone may take part in an ``open`` competition; an ``approval`` one needs an organizer's yes."""
    if competition.participation == Participation.OPEN or is_organizer(session, user, competition.id):
        return True
    query = select(Participant.approved_at).where(
        Participant.competition_id == competition.id, Participant.user_id == user.id
    )
    return session.scalar(query) is not None


def require_participant(session: Session, user: User, competition: Competition) -> None:
    if not may_participate(session, user, competition):
        raise Forbidden(
            f"taking part in {competition.slug!r} needs an organizer's approval; "
            f"ask for it with POST /api/v1/competitions/{competition.slug}/participation"
        )
