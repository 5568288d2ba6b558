"""The organizers' page of a phase: every submission with filters and errors, rescoring, revealing a
hidden phase, one zip with everything, and hosted baseline runs (start, follow, cancel)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse
from sqlalchemy.orm import Session
from starlette.background import BackgroundTask

from app.services.accounts.access import require_organizer
from app.services.baselines import runs, views
from app.services.code import baselines as code_baselines
from app.services.competitions import catalog, participation, phase_edits, usage
from app.services.competitions.archives import archive_name, write_phase_archive
from app.services.errors import InvalidInput
from app.services.submissions import changes, results
from app.services.submissions.detail import view_submission
from app.services.submissions.intake import Upload
from app.services.submissions.limits import too_large
from app.storage.models import Phase, RunStatus, SubmissionStatus, User
from app.web import sessions
from app.web.csrf import check_token, require_csrf
from app.web.deps import PhaseRef, RowId, SessionDep, StateDep
from app.web.pages import urls
from app.web.pages.confirm import Confirmed, Question, confirm_first
from app.web.pages.forms import BaselineName, Description, ShortText, UserName
from app.web.pages.render import SECURITY_HEADERS, PageRoute, get_pages, redirect, render
from app.web.sessions import LoggedIn
from app.web.uploads import read_form, upload_limit_for

router = APIRouter(route_class=PageRoute, include_in_schema=False)
CSRF = [Depends(require_csrf)]
PHASE = "/c/{competition}/{task}/{phase}"


@router.get("/c/{competition}/organize")
def organize_competition(competition: str, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    """The organizers' page of a competition: its phases' organize pages and the participation requests."""
    competition_row = catalog.get_competition(session, competition)
    context = {
        "c": competition_row,
        "participants": participation.participant_views(session, viewer, competition_row),
        "usage": usage.competition_usage(session, viewer, competition_row.slug, get_pages(request).state.limits),
    }
    return render(request, "organize_competition.html", context, viewer=viewer)


PARTICIPANT_ACTIONS = {
    "approve": (participation.approve_participant, "{name} may take part now."),
    "refuse": (participation.refuse_participant, "{name} may not take part; they see that their request was declined."),
    "remove": (participation.remove_participant, "{name} no longer takes part (they may ask again)."),
}


@router.post("/c/{competition}/organize/participants/{action}", dependencies=CSRF)
def answer_participant(
    competition: str,
    action: Literal["approve", "refuse", "remove"],
    request: Request,
    session: SessionDep,
    viewer: LoggedIn,
    name: UserName = "",
) -> Response:
    """Approve, refuse or remove one participant (the form's ``name``)."""
    competition_row = catalog.get_competition(session, competition)
    act, done = PARTICIPANT_ACTIONS[action]
    act(session, viewer, competition_row, name)
    sessions.flash(request, done.format(name=name))
    return redirect(f"{urls.competition(competition)}/organize#participants")


@router.get(PHASE + "/organize")
def organize(
    ref: PhaseRef, request: Request, session: SessionDep, viewer: LoggedIn, status: str = "", team: str = ""
) -> Response:
    """Every submission of the phase, newest first, filtered by status and by team name."""
    return _organize_page(request, session, viewer, ref, status=status, team=team)


def _organize_page(
    request: Request,
    session: Session,
    viewer: User,
    ref: tuple[str, str, str],
    *,
    status: str = "",
    team: str = "",
    edit: dict[str, str] | None = None,
    edit_error: InvalidInput | None = None,
) -> Response:
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
        "baselines": runs.registry(phase_row.task.scorer, runs_here=get_pages(request).state.broker is None),
        "runs": views.describe_runs(session, runs.list_runs(session, viewer, phase_row)),
        "edit": edit if edit is not None else _form_values(phase_row),
        "edit_error": edit_error,
        "changes": phase_edits.phase_changes(session, viewer, phase_row),
    }
    return render(
        request, "organize.html", context, viewer=viewer, status=edit_error.status if edit_error is not None else 200
    )


def _local(moment: datetime | None) -> str:
    """A UTC instant as a ``datetime-local`` field shows it (the form's times are UTC)."""
    return "" if moment is None else moment.strftime("%Y-%m-%dT%H:%M")


def _form_values(phase_row: Phase) -> dict[str, str]:
    return {
        "starts_at": _local(phase_row.starts_at),
        "ends_at": _local(phase_row.ends_at),
        "daily_limit": "" if phase_row.daily_limit is None else str(phase_row.daily_limit),
        "total_limit": "" if phase_row.total_limit is None else str(phase_row.total_limit),
        "visibility": str(phase_row.visibility),
        "description": phase_row.description,
        "frozen_at": _local(phase_row.frozen_at),
        "final_submissions": "" if phase_row.final_submissions is None else str(phase_row.final_submissions),
        "board": phase_row.board,
    }


def _from_form(form: dict[str, str]) -> dict[str, Any]:
    """The form's text as the values ``edit_phase`` takes (the API's JSON): an empty field unsets a time
    or a limit, a time gets its zone (the form's times are UTC), digits become a number; anything else
    is passed on as text for the service to refuse with its message."""
    values: dict[str, Any] = {}
    for key, text in form.items():
        if key in ("starts_at", "ends_at", "frozen_at"):
            values[key] = f"{text.strip()}Z" if text.strip() else None
        elif key in ("daily_limit", "total_limit", "final_submissions"):
            text = text.strip()
            values[key] = None if not text else int(text) if text.isascii() and text.isdigit() else text
        else:
            values[key] = text
    return values


@router.post(PHASE + "/organize/phase", dependencies=CSRF)
def edit_phase(
    ref: PhaseRef,
    request: Request,
    session: SessionDep,
    viewer: LoggedIn,
    starts_at: ShortText = "",
    ends_at: ShortText = "",
    daily_limit: ShortText = "",
    total_limit: ShortText = "",
    visibility: ShortText = "",
    description: Description = "",
    frozen_at: ShortText = "",
    final_submissions: ShortText = "",
    board: ShortText = "",
) -> Response:
    """The edit form: the same rules and the same log as ``PATCH /api/v1/.../phases/{phase}``."""
    phase_row = catalog.get_phase(session, *ref)
    form = {
        "starts_at": starts_at,
        "ends_at": ends_at,
        "daily_limit": daily_limit,
        "total_limit": total_limit,
        "visibility": visibility,
        # Browsers send a textarea's line breaks as CRLF; compared as sent, every save would change it.
        "description": description.replace("\r\n", "\n"),
        "frozen_at": frozen_at,
        "final_submissions": final_submissions,
        "board": board or phase_row.board,
    }
    # Only the fields changed from what the form showed go to the service, so a field left alone keeps
    # its stored value exactly (a time the form shows to the minute is not rounded by saving).
    shown = _form_values(phase_row)
    edited = {key: value for key, value in form.items() if value != shown[key]}
    try:
        logged = phase_edits.edit_phase(session, viewer, phase_row, _from_form(edited))
    except InvalidInput as exc:
        return _organize_page(request, session, viewer, ref, edit=form, edit_error=exc)
    changed = ", ".join(c.field for c in logged) or "nothing (every value was already so)"
    sessions.flash(request, f"Phase saved; changed: {changed}.")
    return redirect(urls.phase_part(ref, "organize"))


RESCORE_PHASE = Question(
    question="Score every submission of {title} again?",
    details=[
        "Every scored or failed submission of the phase is queued for scoring again; on a large phase "
        "this keeps the scoring workers busy for a while.",
        "The current scores stay on the leaderboard until the new ones land; none is overwritten.",
    ],
    button="Yes, score everything again",
)
REVEAL = Question(
    question="Reveal the results of {title}?",
    details=[
        "Everyone will see the leaderboard's numbers, its exports and every submission's scores.",
        "This cannot be undone: once seen, results cannot be hidden again.",
    ],
    button="Yes, reveal the results",
)


def _phase_action(
    ref: tuple[str, str, str], request: Request, session: Session, viewer: User, confirmed: str, asking: Question
) -> tuple[Phase, Response | None]:
    """The phase of an organizers' action on a whole phase, and the page that asks first (``None`` once
    confirmed); refused unless ``viewer`` organizes the competition."""
    phase_row = catalog.get_phase(session, *ref)
    require_organizer(session, viewer, phase_row.task.competition)
    back = urls.phase_part(ref, "organize")
    return phase_row, confirm_first(request, viewer, confirmed, asking, back=back, title=phase_row.title)


@router.post(PHASE + "/organize/rescore", dependencies=CSRF)
def rescore_phase(
    ref: PhaseRef, request: Request, session: SessionDep, viewer: LoggedIn, confirmed: Confirmed = ""
) -> Response:
    phase_row, asked = _phase_action(ref, request, session, viewer, confirmed, RESCORE_PHASE)
    if asked is not None:
        return asked
    queued = changes.rescore_phase(session, viewer, phase_row)
    sessions.flash(request, f"{queued} submission(s) queued for scoring again; their current scores stay until then.")
    return redirect(urls.phase_part(ref, "organize"))


@router.post(PHASE + "/organize/reveal", dependencies=CSRF)
def reveal(
    ref: PhaseRef, request: Request, session: SessionDep, viewer: LoggedIn, confirmed: Confirmed = ""
) -> Response:
    phase_row, asked = _phase_action(ref, request, session, viewer, confirmed, REVEAL)
    if asked is not None:
        return asked
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
    ref: PhaseRef, request: Request, session: SessionDep, viewer: LoggedIn, baseline: BaselineName = ""
) -> Response:
    """Queue a run of a baseline system with its default options (other options: the API or the CLI)."""
    phase_row = catalog.get_phase(session, *ref)
    run = runs.start_run(session, viewer, phase_row, baseline, runs_here=get_pages(request).state.broker is None)
    sessions.flash(request, f"Baseline run {run.id} ({run.baseline} {run.baseline_version}) is queued.")
    return redirect(urls.phase_part(ref, "organize"))


@router.post(PHASE + "/organize/baseline-programs")
async def upload_baseline_program(
    ref: PhaseRef, request: Request, state: StateDep, session: SessionDep, viewer: LoggedIn
) -> Response:
    """Upload a program as a baseline of a code phase: it runs as a team's program does (the API: POST
    .../baseline-programs, the CLI: podium baseline upload)."""
    limit = await run_in_threadpool(upload_limit_for, state, ref)
    form = await read_form(request, file_limit=limit, too_large=lambda size: too_large(limit, size))
    check_token(request, form.fields.get("csrf_token"))
    upload = form.upload()
    if upload is None or not upload.content.size:  # the form sends an empty part when no file was chosen
        raise InvalidInput("no program was chosen", [{"where": "file", "message": "choose the program's zip"}])
    program = Upload(upload.content, upload.filename, method_name=form.fields.get("name", ""))
    stored = await run_in_threadpool(code_baselines.submit_baseline, session, viewer, ref, program)
    sessions.flash(request, f"The baseline program {stored.baseline_name} is queued to run.")
    return redirect(urls.submission(stored.id))


@router.post("/baseline-runs/{run_id}/cancel", dependencies=CSRF)
def cancel_baseline(
    run_id: RowId, request: Request, session: SessionDep, viewer: LoggedIn, confirmed: Confirmed = ""
) -> Response:
    shown = views.describe_run(session, runs.get_run(session, viewer, run_id))
    organize_page = urls.phase_part((shown.competition, shown.task, shown.phase), "organize")
    asking = Question(
        question="Cancel baseline run {title}?",
        details=[
            "The run has not started; it is cancelled at once."
            if shown.status == RunStatus.QUEUED
            else "The run stops at its next check and writes no submission; what it computed so far is lost.",
            "Running the baseline again starts from the beginning.",
        ],
        button="Yes, cancel the run",
    )
    asked = confirm_first(request, viewer, confirmed, asking, back=organize_page, title=f"{run_id} ({shown.title})")
    if asked is not None:
        return asked
    shown = views.describe_run(session, runs.request_cancel(session, viewer, run_id))
    done = "is cancelled" if shown.status == RunStatus.CANCELLED else "stops at its next check"
    sessions.flash(request, f"Baseline run {run_id} {done}.")
    return redirect(organize_page)


@router.get("/baseline-runs/{run_id}/status.json")
def baseline_status(run_id: RowId, session: SessionDep, viewer: LoggedIn) -> dict[str, Any]:
    """The run's status and progress, for the page's script to poll while the run waits or runs."""
    shown = views.describe_run(session, runs.get_run(session, viewer, run_id))
    return {"id": run_id, "status": shown.status, "progress": asdict(shown.progress)}
