"""The organizers' page of a competition's own queues: create one, issue, revoke and rotate its worker
credentials (a new secret is shown on the answer to the form that made it, never stored in the session cookie nor
shown again), send a code phase's runs (and a program-scored phase's scoring) to a queue or back to the platform's,
delete a queue (after asking: its phases go back to the platform), and read each worker's last contact, what it
runs, and the backlog. The same services as the API (``app.services.workers.queues``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.orm import Session

from app.services.accounts.access import require_organizer
from app.services.competitions import catalog
from app.services.errors import Conflict, InvalidInput, ServiceError
from app.services.workers import queues
from app.services.workers.queues import Issued
from app.storage.models import Competition, User, WorkerCredential, WorkerQueue
from app.storage.types import utcnow
from app.web import sessions
from app.web.csrf import require_csrf
from app.web.deps import RowId, SessionDep
from app.web.pages import urls
from app.web.pages.confirm import Confirmed, Question, confirm_first
from app.web.pages.forms import form_for, form_text
from app.web.pages.render import PageRoute, form_again, redirect, render
from app.web.sessions import LoggedIn

router = APIRouter(route_class=PageRoute, include_in_schema=False)
CSRF = [Depends(require_csrf)]
PAGE = "/c/{competition}/organize/queues"

QueueName = form_for(WorkerQueue.name)
Label = form_for(WorkerCredential.label)
#: ``task/phase`` of a code phase.
PhaseName = form_text(200)
#: A checkbox: any value is "on".
Flag = form_text(8)
#: The page a form returns to.
BackTo = form_text(600)


def _context(session: Session, viewer: User, competition: Competition, issued: Issued | None = None) -> dict[str, Any]:
    found = queues.queues_of(session, viewer, competition)
    now = utcnow()
    program = queues.PROGRAM_SCORER
    code_phases = [(t, p) for t in competition.tasks for p in t.phases if p.code is not None or t.scorer == program]
    routes = {p.id: queues.queue_of_phase(session, p.id) for _, p in code_phases}
    scoring = {p.id: queues.scores_remotely(session, p.id) for _, p in code_phases}
    return {
        "c": competition,
        "now": now,
        "queues": [queues.describe(session, q, now=now) for q in found],
        "phases": [
            (f"{t.slug}/{p.slug}", f"{t.title} › {p.title}", routes[p.id], t.scorer == program, scoring[p.id])
            for t, p in code_phases
        ],
        "issued": issued,
        "issued_queue": None if issued is None else session.get(WorkerQueue, issued.credential.queue_id),
    }


def _back(competition: str) -> str:
    return f"{urls.competition(competition)}/organize/queues"


@router.get(PAGE)
def queues_page(competition: str, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    competition_row = catalog.get_competition(session, competition)
    require_organizer(session, viewer, competition_row)
    return render(request, "organize_queues.html", _context(session, viewer, competition_row), viewer=viewer)


def _refused(
    request: Request, session: Session, viewer: User, competition: Competition, error: ServiceError
) -> Response:
    session.rollback()
    return form_again(
        request, session, "organize_queues.html", _context(session, viewer, competition), error, viewer=viewer
    )


@router.post(PAGE, dependencies=CSRF)
def create_queue(
    competition: str, request: Request, session: SessionDep, viewer: LoggedIn, name: QueueName = ""
) -> Response:
    competition_row = catalog.get_competition(session, competition)
    try:
        queues.create_queue(session, viewer, competition_row, name)
    except (InvalidInput, ServiceError) as exc:
        if exc.status in (401, 403):
            raise
        return _refused(request, session, viewer, competition_row, exc)
    sessions.flash(request, f"Queue {name} created: issue a credential for each machine that serves it.")
    return redirect(_back(competition))


def _issued_page(
    request: Request, session: Session, viewer: User, competition: Competition, issued: Issued
) -> Response:
    # Shown on this answer only: the session cookie is signed, not secret, so the credential never goes there.
    context = _context(session, viewer, competition, issued)
    return render(request, "organize_queues.html", context, viewer=viewer, headers={"Cache-Control": "no-store"})


@router.post(PAGE + "/{name}/credentials", dependencies=CSRF)
def issue_credential(
    competition: str, name: str, request: Request, session: SessionDep, viewer: LoggedIn, label: Label = ""
) -> Response:
    competition_row = catalog.get_competition(session, competition)
    queue = queues.get_queue(session, viewer, competition_row, name)
    return _issued_page(request, session, viewer, competition_row, queues.issue_credential(session, queue, label))


@router.post(PAGE + "/{name}/credentials/{credential_id}/rotate", dependencies=CSRF)
def rotate_credential(
    competition: str, name: str, credential_id: RowId, request: Request, session: SessionDep, viewer: LoggedIn
) -> Response:
    competition_row = catalog.get_competition(session, competition)
    queue = queues.get_queue(session, viewer, competition_row, name)
    return _issued_page(request, session, viewer, competition_row, queues.rotate(session, queue, credential_id))


@router.post(PAGE + "/{name}/credentials/{credential_id}/revoke", dependencies=CSRF)
def revoke_credential(
    competition: str, name: str, credential_id: RowId, request: Request, session: SessionDep, viewer: LoggedIn
) -> Response:
    competition_row = catalog.get_competition(session, competition)
    queue = queues.get_queue(session, viewer, competition_row, name)
    queues.revoke(session, queue, credential_id)
    sessions.flash(request, f"Credential {credential_id} revoked: its worker is refused at its next call.")
    return redirect(_back(competition))


@router.post(PAGE + "/route", dependencies=CSRF)
def route_phase(
    competition: str,
    request: Request,
    session: SessionDep,
    viewer: LoggedIn,
    phase: PhaseName = "",
    queue: QueueName = "",
    scoring: Flag = "",
    back: BackTo = "",
) -> Response:
    """Send a phase's code runs (``phase``: task/phase) to a queue, or back to the platform's (``queue`` empty);
    ``scoring`` set: a phase scored by a program sends its scoring there too. ``back``: the page to return to (a
    phase's own page, where it says that no worker of its queue is live), else the queues page."""
    competition_row = catalog.get_competition(session, competition)
    require_organizer(session, viewer, competition_row)
    task, _, phase_slug = phase.partition("/")
    phase_row = catalog.get_phase(session, competition, task, phase_slug)
    try:
        queues.route_phase(session, viewer, phase_row, queue or None, scoring=bool(scoring))
    except (InvalidInput, Conflict) as exc:
        return _refused(request, session, viewer, competition_row, exc)
    where = f"queue {queue}" if queue else "the platform's workers"
    what = "runs and scoring" if scoring and queue else "runs"
    sessions.flash(request, f"The {what} of {phase} go to {where} now.")
    return redirect(back if back in _phase_pages(competition_row) else _back(competition))


def _phase_pages(competition: Competition) -> set[str]:
    """The pages a phase's form may return to: its phase and submit pages (no other address: no open redirect)."""
    pages = set()
    for task in competition.tasks:
        for phase in task.phases:
            ref = (competition.slug, task.slug, phase.slug)
            pages |= {urls.phase(ref), urls.phase_part(ref, "submit")}
    return pages


DELETE_QUEUE = Question(
    question="Delete the queue {title}?",
    details=[
        "Its phases go back to the platform's workers, and what its workers run or score now is put back to wait "
        "there at once (the attempt is not counted against anyone).",
        "Its credentials end with it: a worker holding one is refused at its next call.",
    ],
    button="Yes, delete the queue",
)


@router.post(PAGE + "/{name}/delete", dependencies=CSRF)
def delete_queue(
    competition: str, name: str, request: Request, session: SessionDep, viewer: LoggedIn, confirmed: Confirmed = ""
) -> Response:
    competition_row = catalog.get_competition(session, competition)
    queue = queues.get_queue(session, viewer, competition_row, name)
    asked = confirm_first(request, viewer, confirmed, DELETE_QUEUE, back=_back(competition), title=queue.name)
    if asked is not None:
        return asked
    moved = queues.delete_queue(session, viewer, competition_row, name)
    back = f": {', '.join(moved)} went back to the platform's workers" if moved else ""
    sessions.flash(request, f"Queue {name} deleted{back}.")
    return redirect(_back(competition))
