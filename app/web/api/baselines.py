"""Hosted baselines: the registry (public), and runs on a phase (the competition's organizers only)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.status import HTTP_202_ACCEPTED

from app.services.baselines import runs, views
from app.services.competitions import catalog
from app.web.deps import CurrentUser, RowId, SessionDep, StateDep
from app.web.schemas.baselines import BaselineList, RunCreate, RunList, RunOut
from app.web.schemas.common import ErrorOut

router = APIRouter(tags=["baselines"])

PHASE = "/competitions/{competition}/tasks/{task}/phases/{phase}"

_ORGANIZERS_ONLY: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "no valid token"},
    403: {"model": ErrorOut, "description": "not an organizer of the competition"},
}
_NOT_YOURS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "no valid token"},
    404: {"model": ErrorOut, "description": "no such run, or not one of a competition you organize"},
}


@router.get("/baselines", response_model=BaselineList)
def list_baselines(
    state: StateDep,
    scorer: Annotated[str | None, Query(description="only the systems that write this scorer's format")] = None,
) -> dict[str, Any]:
    """The registered baseline systems, with their versions, scorers and options, and whether this server can
    run each (``available``; what to install when not; unknown where separate workers run the jobs)."""
    return {"baselines": runs.registry(scorer, runs_here=state.broker is None)}


@router.post(
    PHASE + "/baseline-runs",
    response_model=RunOut,
    status_code=HTTP_202_ACCEPTED,
    responses={
        **_ORGANIZERS_ONLY,
        409: {
            "model": ErrorOut,
            "description": "the same baseline is already queued or running on this phase, or the server cannot "
            "run it (baseline_unavailable: its modules are not installed)",
        },
        422: {"model": ErrorOut, "description": "unknown baseline, one for another scorer, or bad options"},
    },
)
def start_run(
    competition: str, task: str, phase: str, body: RunCreate, session: SessionDep, user: CurrentUser, state: StateDep
) -> RunOut:
    """Queue a run of a baseline system on the phase's public inputs (organizers). On success its output
    becomes a baseline submission, scored and ranked like any other and marked on the leaderboard."""
    phase_row = catalog.get_phase(session, competition, task, phase)
    run = runs.start_run(session, user, phase_row, body.baseline, body.options, runs_here=state.broker is None)
    return RunOut.of(views.describe_run(session, run))


@router.get(PHASE + "/baseline-runs", response_model=RunList, responses=_ORGANIZERS_ONLY)
def list_runs(competition: str, task: str, phase: str, session: SessionDep, user: CurrentUser) -> RunList:
    """The phase's baseline runs, newest first, with progress, log tail and errors (organizers)."""
    phase_row = catalog.get_phase(session, competition, task, phase)
    return RunList.of(views.describe_runs(session, runs.list_runs(session, user, phase_row)))


@router.get("/baseline-runs/{run_id}", response_model=RunOut, responses=_NOT_YOURS)
def get_run(run_id: RowId, session: SessionDep, user: CurrentUser) -> RunOut:
    """One run: its status, progress (done, total, rate, time left), log tail, error and submission."""
    return RunOut.of(views.describe_run(session, runs.get_run(session, user, run_id)))


@router.post(
    "/baseline-runs/{run_id}/cancel",
    response_model=RunOut,
    status_code=HTTP_202_ACCEPTED,
    responses={**_NOT_YOURS, 409: {"model": ErrorOut, "description": "the run has finished already"}},
)
def cancel_run(run_id: RowId, session: SessionDep, user: CurrentUser) -> RunOut:
    """Stop a run (organizers): a queued one at once, a running one at its next check, within seconds."""
    run = runs.request_cancel(session, user, run_id)
    return RunOut.of(views.describe_run(session, run))
