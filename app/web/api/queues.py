"""A competition's own queues, their worker credentials, and which queue a code phase's runs go to (organizers)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.status import HTTP_201_CREATED

from app.services.competitions import catalog
from app.services.workers import queues
from app.web.deps import CurrentUser, RowId, SessionDep
from app.web.schemas.common import ErrorOut
from app.web.schemas.workers import (
    CredentialCreate,
    CredentialOut,
    IssuedOut,
    PhaseQueueOut,
    PhaseQueueSet,
    QueueCreate,
    QueueDeleted,
    QueueList,
    QueueOut,
)

router = APIRouter(tags=["worker queues"])

QUEUES = "/competitions/{competition}/queues"
QUEUE = QUEUES + "/{name}"
PHASE = "/competitions/{competition}/tasks/{task}/phases/{phase}"

_ORGANIZERS_ONLY: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "no valid token"},
    403: {"model": ErrorOut, "description": "not an organizer of the competition"},
}


def _credential_view(session: SessionDep, queue: Any, credential_id: int) -> CredentialOut:
    view = queues.describe(session, queue)
    return CredentialOut.of(next(c for c in view.credentials if c.id == credential_id))


@router.post(
    QUEUES,
    response_model=QueueOut,
    status_code=HTTP_201_CREATED,
    responses={**_ORGANIZERS_ONLY, 409: {"model": ErrorOut, "description": "the name is taken"}},
)
def create_queue(competition: str, body: QueueCreate, session: SessionDep, user: CurrentUser) -> QueueOut:
    """Create a queue of the competition, served by the organizers' own workers (``podium worker --remote``)."""
    queue = queues.create_queue(session, user, catalog.get_competition(session, competition), body.name)
    return QueueOut.of(queues.describe(session, queue))


@router.get(QUEUES, response_model=QueueList, responses=_ORGANIZERS_ONLY)
def list_queues(competition: str, session: SessionDep, user: CurrentUser) -> QueueList:
    """The competition's queues: their credentials (last contact, what each runs) and backlog."""
    found = queues.queues_of(session, user, catalog.get_competition(session, competition))
    return QueueList(queues=[QueueOut.of(queues.describe(session, queue)) for queue in found])


@router.get(QUEUE, response_model=QueueOut, responses=_ORGANIZERS_ONLY)
def get_queue(competition: str, name: str, session: SessionDep, user: CurrentUser) -> QueueOut:
    """One queue: its phases, its credentials (last contact, what each runs) and its backlog."""
    queue = queues.get_queue(session, user, catalog.get_competition(session, competition), name)
    return QueueOut.of(queues.describe(session, queue))


@router.post(QUEUE + "/credentials", response_model=IssuedOut, status_code=HTTP_201_CREATED, responses=_ORGANIZERS_ONLY)
def issue_credential(
    competition: str, name: str, body: CredentialCreate, session: SessionDep, user: CurrentUser
) -> IssuedOut:
    """A credential for one worker of the queue; its secret is in this answer only (keep it in a file)."""
    queue = queues.get_queue(session, user, catalog.get_competition(session, competition), name)
    return IssuedOut.of(queues.issue_credential(session, queue, body.label))


@router.post(QUEUE + "/credentials/{credential_id}/revoke", response_model=CredentialOut, responses=_ORGANIZERS_ONLY)
def revoke_credential(
    competition: str, name: str, credential_id: RowId, session: SessionDep, user: CurrentUser
) -> CredentialOut:
    """End a credential: the worker holding it is refused at its next call."""
    queue = queues.get_queue(session, user, catalog.get_competition(session, competition), name)
    queues.revoke(session, queue, credential_id)
    return _credential_view(session, queue, credential_id)


@router.post(
    QUEUE + "/credentials/{credential_id}/rotate",
    response_model=IssuedOut,
    status_code=HTTP_201_CREATED,
    responses=_ORGANIZERS_ONLY,
)
def rotate_credential(
    competition: str, name: str, credential_id: RowId, session: SessionDep, user: CurrentUser
) -> IssuedOut:
    """A new secret under the same label; the old one is revoked at once."""
    queue = queues.get_queue(session, user, catalog.get_competition(session, competition), name)
    return IssuedOut.of(queues.rotate(session, queue, credential_id))


@router.put(
    PHASE + "/queue",
    response_model=PhaseQueueOut,
    responses={**_ORGANIZERS_ONLY, 409: {"model": ErrorOut, "description": "not a code phase"}},
)
def set_phase_queue(
    competition: str, task: str, phase: str, body: PhaseQueueSet, session: SessionDep, user: CurrentUser
) -> PhaseQueueOut:
    """Send the phase's code runs to a queue of the competition, or back to the platform's (``queue: null``);
    with ``scoring: true`` a phase scored by a program sends its scoring there too (the queue's workers then
    receive the phase's gold for the submissions they score). What waits now follows at once."""
    found = queues.route_phase(
        session, user, catalog.get_phase(session, competition, task, phase), body.queue, scoring=body.scoring
    )
    return PhaseQueueOut(queue=found.name if found is not None else None, scoring=found is not None and body.scoring)


@router.delete(QUEUE, response_model=QueueDeleted, responses=_ORGANIZERS_ONLY)
def delete_queue(competition: str, name: str, session: SessionDep, user: CurrentUser) -> QueueDeleted:
    """Delete the queue: its phases go back to the platform's queues (what its workers hold now is put back to
    wait there at once, the attempt not counted) and its credentials end with it."""
    moved = queues.delete_queue(session, user, catalog.get_competition(session, competition), name)
    return QueueDeleted(deleted=name, phases=moved)
