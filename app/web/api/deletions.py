"""Organizers deleting a competition or a phase's submissions, site admins deleting an account (what each keeps
is the services' to say: ``competitions.removal``, ``submissions.clearing``, ``accounts.removal``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.services.accounts import removal as accounts_removal
from app.services.competitions import catalog
from app.services.competitions import removal as competitions_removal
from app.services.submissions import clearing
from app.web.deps import CurrentUser, SessionDep
from app.web.schemas.accounts import TeamName
from app.web.schemas.common import ErrorOut
from app.web.schemas.deletions import CompetitionDeletedOut, SubmissionsDeletedOut, UserDeletedOut

router = APIRouter(tags=["deletion"])

REFUSED: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorOut},
    404: {"model": ErrorOut},
    409: {"model": ErrorOut},
}


@router.delete("/competitions/{competition}", response_model=CompetitionDeletedOut, responses=REFUSED)
def delete_competition(competition: str, session: SessionDep, user: CurrentUser) -> CompetitionDeletedOut:
    """Delete the competition and everything of it: tasks, phases, files, teams, submissions, boards, worker queues
    and their credentials (its organizers and site admins). Nothing of it is kept. 409 ``competition_busy`` while a
    worker runs one of its submissions or baselines."""
    return CompetitionDeletedOut.of(competitions_removal.delete_competition(session, user, competition))


@router.delete(
    "/competitions/{competition}/tasks/{task}/phases/{phase}/submissions",
    response_model=SubmissionsDeletedOut,
    responses=REFUSED,
)
def delete_phase_submissions(
    competition: str, task: str, phase: str, session: SessionDep, user: CurrentUser, team: TeamName | None = None
) -> SubmissionsDeletedOut:
    """Delete the phase's submissions, or only ``team``'s (organizers). Those a revealed board's final ranking
    shows are kept for the record, and those a worker holds stay until it is done; the answer names both.
    What goes still counts against its team's limits."""
    phase_row = catalog.get_phase(session, competition, task, phase)
    return SubmissionsDeletedOut.of(clearing.delete_phase_submissions(session, user, phase_row, team))


@router.delete("/users/{name}", response_model=UserDeletedOut, responses=REFUSED, tags=["accounts"])
def delete_user(name: str, session: SessionDep, user: CurrentUser) -> UserDeletedOut:
    """Site admins: delete the account. What boards keep (a revealed board's team membership, a kept submission's
    uploader) stays under a placeholder, ``deleted user #N``; everything else goes. Its sessions and API tokens
    stop working at once."""
    return UserDeletedOut.of(accounts_removal.delete_user(session, user, name))
