"""Taking part: the upload form, the team's submissions with live status and quota, and the detail
page of a submission with its metrics, breakdowns and per-document chart."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from app.services.accounts.access import may_participate
from app.services.accounts.teams import team_of
from app.services.code.settings import CodeSettings
from app.services.competitions import catalog, participation, samples
from app.services.errors import InvalidInput, ServiceError
from app.services.submissions import changes, intake, quota, results
from app.services.submissions.detail import SubmissionView, view_submission
from app.services.submissions.limits import describe_size, too_large, upload_limit
from app.services.submissions.results import SubmissionRecord
from app.storage.models import Phase, SubmissionStatus, User
from app.storage.types import utcnow
from app.web import sessions
from app.web.csrf import CsrfRefused, check_token, require_csrf
from app.web.deps import PhaseRef, RowId, SessionDep, StateDep
from app.web.pages import boards, own_workers, urls
from app.web.pages.public import SVG_HEADERS
from app.web.pages.render import PageRoute, get_pages, redirect, render, wants_json
from app.web.sessions import LoggedIn, Viewer
from app.web.state import AppState
from app.web.uploads import read_form, upload_limit_for
from leaderboard.tables import Table, breakdown_tables, metrics_table
from scorers.description import ScorerDescription

router = APIRouter(route_class=PageRoute, include_in_schema=False)
CSRF = [Depends(require_csrf)]
PENDING = (SubmissionStatus.QUEUED, SubmissionStatus.RUNNING, SubmissionStatus.AWAITING_RUN)
PHASE = "/c/{competition}/{task}/{phase}"


def _submit_context(session: Session, state: AppState, user: User, phase: Phase) -> dict[str, Any]:
    """What the form shows besides the fields: whether one may submit now, the limits and the format."""
    now = utcnow()
    task = phase.task
    team = team_of(session, user, task.competition_id)
    limit = upload_limit(phase, state.limits)
    ref = (task.competition.slug, task.slug, phase.slug)
    return {
        "phase": phase,
        "task": task,
        "competition": task.competition,
        "ref": ref,
        "state": catalog.phase_state(phase, now),
        "allowed": may_participate(session, user, task.competition),
        "request_state": participation.own_request(session, user, task.competition),
        "team": team,
        "usage": quota.usage(session, phase, team.id if team else None, now),
        "limit_text": describe_size(limit),
        "limit": limit,
        "format": catalog.task_description(task),
        "format_notes": samples.format_notes(session, state.gold_cache, phase),
        "program": CodeSettings.of(phase.code) if phase.code is not None else None,
        "now": now,
        **own_workers.notice(session, phase, user, urls.phase_part(ref, "submit")),
    }


@router.get(PHASE + "/submit")
def submit_form(
    competition: str, task: str, phase: str, request: Request, session: SessionDep, viewer: LoggedIn
) -> Response:
    phase_row = catalog.get_phase(session, competition, task, phase)
    context = _submit_context(session, get_pages(request).state, viewer, phase_row)
    context.update(error=None, method_name="", method_description="")
    return render(request, "submit.html", context, viewer=viewer)


@router.post(PHASE + "/submit")
async def submit(ref: PhaseRef, request: Request, state: StateDep, session: SessionDep, viewer: LoggedIn) -> Response:
    """Upload a file through the form (or the page's script, which asks for JSON to show progress)."""
    limit = await run_in_threadpool(upload_limit_for, state, ref)
    fields: dict[str, str] = {}
    try:
        form = await read_form(request, file_limit=limit, too_large=too_large(limit))
        fields = form.fields
        check_token(request, fields.get("csrf_token"))
        upload = form.upload()
        if upload is None or not (upload.filename or upload.content.size):  # the form sends an empty part
            raise InvalidInput("no file was chosen", [{"where": "file", "message": "choose the prediction file"}])
        accepted = await run_in_threadpool(
            intake.submit,
            session,
            viewer,
            ref,
            upload,
            limits=state.limits,
            gold_cache=state.gold_cache,
            handoff=state.handoff,
        )
    except CsrfRefused:
        raise
    except ServiceError as exc:
        await run_in_threadpool(session.rollback)
        return await _refused(request, session, state, viewer, ref, exc, fields)
    target = urls.submission(accepted.submission.id)
    sessions.flash(request, "Your file was accepted and is queued for scoring.")
    if wants_json(request):
        return JSONResponse(
            {"id": accepted.submission.id, "status": accepted.submission.status, "redirect": target}, status_code=202
        )
    return redirect(target)


async def _refused(
    request: Request,
    session: Session,
    state: AppState,
    viewer: User,
    ref: tuple[str, str, str],
    error: ServiceError,
    fields: dict[str, str],
) -> Response:
    """The refusal of an upload: JSON for the page's script, else the form again with the problems."""
    if wants_json(request):
        return JSONResponse(error.to_dict(), status_code=error.status)

    def form_again() -> Response:
        phase_row = catalog.get_phase(session, *ref)
        context = _submit_context(session, state, viewer, phase_row)
        context.update(
            error=error,
            method_name=fields.get("method_name", ""),
            method_description=fields.get("method_description", ""),
        )
        return render(request, "submit.html", context, viewer=viewer, status=error.status)

    return await run_in_threadpool(form_again)


@router.get(PHASE + "/submissions")
def my_submissions(
    competition: str, task: str, phase: str, request: Request, session: SessionDep, viewer: LoggedIn
) -> Response:
    """The team's submissions to the phase with their status, the quota left, and the choice that counts."""
    phase_row = catalog.get_phase(session, competition, task, phase)
    records = results.list_for_phase(session, viewer, phase_row)
    team = team_of(session, viewer, phase_row.task.competition_id)
    now = utcnow()
    context = {
        "phase": phase_row,
        "ref": (competition, task, phase),
        "records": records,
        "team": team,
        "usage": quota.usage(session, phase_row, team.id if team else None, now),
        "pending": any(r.status in PENDING for r in records),
        "description": catalog.task_description(phase_row.task),
        "now": now,
    }
    return render(request, "my_submissions.html", context, viewer=viewer)


@router.get("/submissions")
def all_my_submissions(request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    """The submissions of every team the viewer is in, across competitions, newest first."""
    records = results.list_for_user(session, viewer)
    refs = {(r.competition, r.task, r.phase) for r in records}
    phases = {ref: catalog.get_phase(session, *ref) for ref in refs}
    primary = {ref: catalog.task_description(phase.task).primary_metric for ref, phase in phases.items()}
    context = {
        "records": records,
        "phases": phases,
        "primary": primary,
        "pending": any(r.status in PENDING for r in records),
    }
    return render(request, "all_submissions.html", context, viewer=viewer)


# -- one submission --------------------------------------------------------------------------------------


def _view(request: Request, session: Session, viewer: User | None, submission_id: int) -> SubmissionView:
    return view_submission(session, viewer, submission_id, get_pages(request).state.boards)


def _document_scores(view: SubmissionView) -> dict[str, float]:
    from leaderboard.charts import document_scores

    breakdown = view.record.breakdown or {}
    dimension = boards.document_dimension(view.description)
    return document_scores(breakdown, view.description.primary_metric, dimension) if dimension else {}


def _private_table(record: SubmissionRecord, description: ScorerDescription) -> Table | None:
    """The private board's metrics of the submission, where its viewer may see them (``results.describe``)."""
    if not record.private_metrics:
        return None
    units = "all units" if record.private_board == "all" else "the private units"
    return replace(metrics_table(description, record.private_metrics), title=f"Private board: on {units}")


@router.get("/submissions/{submission_id}")
def submission_page(submission_id: RowId, request: Request, session: SessionDep, viewer: Viewer) -> Response:
    view = _view(request, session, viewer, submission_id)
    record = view.record
    description = view.description
    metrics = record.metrics
    breakdown = record.breakdown or {}
    context = {
        "view": view,
        "s": record,
        "ref": view.ref,
        "phase": catalog.get_phase(session, *view.ref),
        "pending": record.status in PENDING,
        "overall": metrics_table(description, metrics) if metrics else None,
        "private": _private_table(record, description),
        "tables": breakdown_tables(description, breakdown) if metrics else [],
        "has_chart": bool(metrics) and bool(_document_scores(view)),
        "unit": boards.document_dimension(description),
        "primary": description.primary_metric,
    }
    return render(request, "submission.html", context, viewer=viewer)


@router.get("/submissions/{submission_id}/status.json")
def submission_status(submission_id: RowId, request: Request, session: SessionDep, viewer: Viewer) -> dict[str, Any]:
    """The status alone, for the page's script to poll while scoring runs."""
    record = _view(request, session, viewer, submission_id).record
    return {"id": record.id, "status": record.status, "message": record.message}


@router.get("/submissions/{submission_id}/documents.svg")
def document_chart(submission_id: RowId, request: Request, session: SessionDep, viewer: Viewer) -> Response:
    """The submission's primary metric per document, drawn by matplotlib on the server."""
    from leaderboard.charts import document_chart as draw

    view = _view(request, session, viewer, submission_id)
    primary = view.description.primary_metric
    spec = view.description.metric(primary)
    higher = spec.higher_is_better if spec is not None else True
    svg = draw(_document_scores(view), metric=primary, higher_is_better=bool(higher))
    return Response(svg, media_type="image/svg+xml", headers=SVG_HEADERS)


@router.post("/submissions/{submission_id}/choose", dependencies=CSRF)
def choose(submission_id: RowId, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    """Make this the submission that counts for the team (phases whose selection is ``chosen``)."""
    submission = changes.choose(session, viewer, submission_id)
    view = _view(request, session, viewer, submission.id)
    final = session.get(Phase, submission.phase_id)
    if final is not None and final.final_submissions is not None:
        sessions.flash(request, f"Submission {submission.id} is now one of your team's final submissions.")
    else:
        sessions.flash(request, f"Submission {submission.id} now counts for your team on the leaderboard.")
    return redirect(urls.phase_part(view.ref, "submissions"))


@router.post("/submissions/{submission_id}/unchoose", dependencies=CSRF)
def unchoose(submission_id: RowId, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    """Take the team's mark off the submission (no longer one of its final submissions)."""
    submission = changes.unchoose(session, viewer, submission_id)
    view = _view(request, session, viewer, submission.id)
    sessions.flash(request, f"Submission {submission.id} is no longer marked.")
    return redirect(urls.phase_part(view.ref, "submissions"))
