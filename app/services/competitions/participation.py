"""Taking part in a competition: asking to, and organizers answering the requests.

A request (a ``Participant`` row) is pending until an organizer approves or refuses it; in an
``open`` competition it is approved at once. A refused user may not take part, not even in an
``open`` competition, nor ask again, until an organizer approves them after all. Removing a
participant deletes the row: they are back where they were before asking (in an ``approval``
competition they may no longer submit, and may ask again).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.accounts.access import require_organizer
from app.services.accounts.users import find_user
from app.services.errors import Conflict, NotFound
from app.storage.models import Competition, Participant, Participation, User
from app.storage.types import utcnow


class RequestState(StrEnum):
    """Where a user's request to take part stands."""

    PENDING = "pending"
    APPROVED = "approved"
    REFUSED = "refused"


def request_state(row: Participant) -> RequestState:
    if row.refused_at is not None:
        return RequestState.REFUSED
    return RequestState.PENDING if row.approved_at is None else RequestState.APPROVED


@dataclass(frozen=True)
class ParticipantView:
    """One request as organizers see it."""

    name: str
    requested_at: datetime
    state: RequestState


def request_participation(session: Session, user: User, competition: Competition) -> Participant:
    """Ask to take part; in an ``open`` competition the request is approved at once. Asking again
    changes nothing; asking after a refusal is refused."""
    row = session.get(Participant, (competition.id, user.id))
    if row is not None and row.refused_at is not None:
        raise Conflict(
            f"the organizers of {competition.slug!r} declined your request to take part", code="participation_refused"
        )
    if row is None:
        row = Participant(competition_id=competition.id, user_id=user.id)
        session.add(row)
    if competition.participation == Participation.OPEN and row.approved_at is None:
        row.approved_at = utcnow()
    session.flush()
    return row


def own_request(session: Session, user: User | None, competition: Competition) -> RequestState | None:
    """The state of ``user``'s own request, ``None`` when they have not asked."""
    row = None if user is None else session.get(Participant, (competition.id, user.id))
    return None if row is None else request_state(row)


def list_participants(session: Session, user: User | None, competition: Competition) -> list[tuple[User, Participant]]:
    require_organizer(session, user, competition)
    query = (
        select(User, Participant)
        .join(Participant, Participant.user_id == User.id)
        .where(Participant.competition_id == competition.id)
        .order_by(Participant.requested_at, User.id)
    )
    return [(u, p) for u, p in session.execute(query)]


def participant_views(session: Session, user: User | None, competition: Competition) -> list[ParticipantView]:
    """Every request, oldest first, with its state (organizers only)."""
    return [
        ParticipantView(u.name, p.requested_at, request_state(p))
        for u, p in list_participants(session, user, competition)
    ]


def _request_of(session: Session, competition: Competition, name: str) -> Participant:
    participant_user = find_user(session, name)
    row = session.get(Participant, (competition.id, participant_user.id)) if participant_user else None
    if row is None:
        raise NotFound(f"{name!r} has not asked to take part in {competition.slug!r}")
    return row


def approve_participant(session: Session, user: User | None, competition: Competition, name: str) -> Participant:
    """Let the user take part (also one refused before)."""
    require_organizer(session, user, competition)
    row = _request_of(session, competition, name)
    if row.approved_at is None or row.refused_at is not None:
        row.approved_at = utcnow()
        row.refused_at = None
        session.flush()
    return row


def refuse_participant(session: Session, user: User | None, competition: Competition, name: str) -> Participant:
    """Decline the user's request (or take back an approval): they may not take part nor ask again."""
    require_organizer(session, user, competition)
    row = _request_of(session, competition, name)
    if row.refused_at is None:
        row.refused_at = utcnow()
        row.approved_at = None
        session.flush()
    return row


def remove_participant(session: Session, user: User | None, competition: Competition, name: str) -> None:
    """Forget the user's request: they no longer take part in an ``approval`` competition, and may ask again."""
    require_organizer(session, user, competition)
    session.delete(_request_of(session, competition, name))
    session.flush()
