"""Taking part in a competition: asking to, and organizers approving the requests of an ``approval`` one."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.accounts.access import require_organizer
from app.services.accounts.users import find_user
from app.services.errors import NotFound
from app.storage.models import Competition, Participant, Participation, User
from app.storage.types import utcnow


def request_participation(session: Session, user: User, competition: Competition) -> Participant:
    """Ask to take part; in an ``open`` competition the request is approved at once."""
    row = session.get(Participant, (competition.id, user.id))
    if row is None:
        row = Participant(competition_id=competition.id, user_id=user.id)
        session.add(row)
    if competition.participation == Participation.OPEN and row.approved_at is None:
        row.approved_at = utcnow()
    session.flush()
    return row


def list_participants(session: Session, user: User | None, competition: Competition) -> list[tuple[User, Participant]]:
    require_organizer(session, user, competition)
    query = (
        select(User, Participant)
        .join(Participant, Participant.user_id == User.id)
        .where(Participant.competition_id == competition.id)
        .order_by(Participant.requested_at, User.id)
    )
    return [(u, p) for u, p in session.execute(query)]


def approve_participant(session: Session, user: User | None, competition: Competition, name: str) -> Participant:
    require_organizer(session, user, competition)
    participant_user = find_user(session, name)
    row = session.get(Participant, (competition.id, participant_user.id)) if participant_user else None
    if row is None:
        raise NotFound(f"{name!r} has not asked to take part in {competition.slug!r}")
    if row.approved_at is None:
        row.approved_at = utcnow()
        session.flush()
    return row
