"""The organizers' page of a phase: every submission with filters and errors, rescoring, revealing a
hidden phase, one zip with everything, and hosted baseline runs (start, follow, cancel)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request, Response
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask

from app.services.accounts.access import require_organizer
from app.services.baselines import runs, views
from app.services.competitions import catalog
from app.services.competitions.archives import archive_name, write_phase_archive
from app.services.submissions import changes, results
from app.services.submissions.detail import view_submission
from app.storage.models import RunStatus, SubmissionStatus
from app.web import sessions
from app.web.csrf import require_csrf
from app.web.deps import PhaseRef, RowId, SessionDep
from app.web.pages import urls
from app.web.pages.render import SECURITY_HEADERS, PageRoute, get_pages, redirect, render
from app.web.sessions import LoggedIn

router = APIRouter(route_class=PageRoute, include_in_schema=False)
CSRF = [Depends(require_csrf)]
PHASE = "/c/{competition}/{task}/{phase}"


@router.get(PHASE + "/organize")
def organize(
    ref: PhaseRef, request: Request, session: SessionDep, viewer: LoggedIn, status: str = "", team: str = ""
) -> Response:
    """Every submission of the phase, newest first, filtered by status and by team name."""
    phase_row = catalog.get_phase(session, *ref)
    require_organizer(session, viewer, phase_row.task.competition)
    records = results.list_for_phase(session, viewer, phase_row, everyone=True)
    wanted = team.strip().casefold()
    shown = [
        r for r in records if (not status or r.status == status) and (not wanted or wanted in (r.team or "").casefold())
    ]
    context = {
        "phase": phase_row,
        "ref": ref,
        "records": shown,
        "total": len(records),
        "counts": Counter(r.status for r in records),
        "statuses": tuple(SubmissionStatus),
        "status": status,
        "team": team,
        "primary": catalog.task_description(phase_row.task).primary_metric,
        "baselines": runs.registry(phase_row.task.scorer),
        "runs": views.describe_runs(session, runs.list_runs(session, viewer, phase_row)),
    }
    return render(request, "organize.html", context, viewer=viewer)


@router.post(PHASE + "/organize/rescore", dependencies=CSRF)
def rescore_phase(ref: PhaseRef, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    phase_row = catalog.get_phase(session, *ref)
    queued = changes.rescore_phase(session, viewer, phase_row)
    sessions.flash(request, f"{queued} submission(s) queued for scoring again; their current scores stay until then.")
    return redirect(urls.phase_part(ref, "organize"))


@router.post(PHASE + "/organize/reveal", dependencies=CSRF)
def reveal(ref: PhaseRef, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    phase_row = catalog.get_phase(session, *ref)
    catalog.reveal_phase(session, viewer, phase_row)
    sessions.flash(request, "The phase's results are public now: leaderboard, exports and submission pages.")
    return redirect(urls.phase(ref))


@router.get(PHASE + "/organize/everything.zip")
def everything(ref: PhaseRef, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    """Every submitted file, every submission's record and the organizers' leaderboard, in one zip."""
    phase_row = catalog.get_phase(session, *ref)
    path = write_phase_archive(session, viewer, phase_row)
    return FileResponse(
        path,
        media_type="application/zip",
        filename=archive_name(phase_row),
        headers=SECURITY_HEADERS,
        background=BackgroundTask(path.unlink, missing_ok=True),
    )


@router.post("/submissions/{submission_id}/rescore", dependencies=CSRF)
def rescore(submission_id: RowId, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    changes.rescore(session, viewer, submission_id)
    view = view_submission(session, viewer, submission_id, get_pages(request).state.boards)
    sessions.flash(request, f"Submission {submission_id} is queued for scoring again.")
    return redirect(urls.submission(view.record.id))


@router.post(PHASE + "/organize/baseline-runs", dependencies=CSRF)
def start_baseline(
    ref: PhaseRef, request: Request, session: SessionDep, viewer: LoggedIn, baseline: Annotated[str, Form()] = ""
) -> Response:
    """Queue a run of a baseline system with its default options (other options: the API or the CLI)."""
    phase_row = catalog.get_phase(session, *ref)
    run = runs.start_run(session, viewer, phase_row, baseline)
    sessions.flash(request, f"Baseline run {run.id} ({run.baseline} {run.baseline_version}) is queued.")
    return redirect(urls.phase_part(ref, "organize"))


@router.post("/baseline-runs/{run_id}/cancel", dependencies=CSRF)
def cancel_baseline(run_id: RowId, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    shown = views.describe_run(session, runs.request_cancel(session, viewer, run_id))
    done = "is cancelled" if shown.status == RunStatus.CANCELLED else "stops at its next check"
    sessions.flash(request, f"Baseline run {run_id} {done}.")
    return redirect(urls.phase_part((shown.competition, shown.task, shown.phase), "organize"))


@router.get("/baseline-runs/{run_id}/status.json")
def baseline_status(run_id: RowId, session: SessionDep, viewer: LoggedIn) -> dict[str, Any]:
    """The run's status and progress, for the page's script to poll while the run waits or runs."""
    shown = views.describe_run(session, runs.get_run(session, viewer, run_id))
    return {"id": run_id, "status": shown.status, "progress": asdict(shown.progress)}
