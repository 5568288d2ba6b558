"""Submitting, and what teams and organizers see of submissions afterwards."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from starlette.status import HTTP_202_ACCEPTED

from app.services.competitions import catalog
from app.services.errors import InvalidInput
from app.services.jobs import queue_stats
from app.services.submissions import changes, intake, results
from app.services.submissions.limits import MAX_METHOD_DESCRIPTION, MAX_METHOD_NAME, too_large, upload_limit
from app.storage.models import Team
from app.storage.types import utcnow
from app.web.deps import CurrentUser, RowId, SessionDep, StateDep
from app.web.schemas import ErrorOut, RescoreOut, SubmissionList, SubmissionOut
from app.web.state import AppState
from app.web.uploads import read_form

router = APIRouter(tags=["submissions"])

PHASE = "/competitions/{competition}/tasks/{task}/phases/{phase}"

_SUBMISSION_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {
                            "type": "string",
                            "format": "binary",
                            "description": "the prediction file, or a zip holding it",
                        },
                        "method_name": {"type": "string", "maxLength": MAX_METHOD_NAME},
                        "method_description": {"type": "string", "maxLength": MAX_METHOD_DESCRIPTION},
                    },
                }
            }
        },
    }
}

_REFUSALS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": text}
    for code, text in {
        401: "no valid token",
        403: "not allowed to take part",
        409: "the phase is closed (the answer says when it opens or when it closed)",
        413: "the file is over the phase's size limit",
        422: "the file was refused: `problems` names each mistake (line, key, expected)",
        429: "the team's limit is used up (`resets_at` says when the daily limit resets)",
    }.items()
}


def _limit(state: AppState, ref: tuple[str, str, str]) -> int:
    with state.db.session(read_only=True) as session:
        return upload_limit(catalog.get_phase(session, *ref), state.limits)


@router.post(
    PHASE + "/submissions",
    status_code=HTTP_202_ACCEPTED,
    response_model=SubmissionOut,
    openapi_extra=_SUBMISSION_BODY,
    responses=_REFUSALS,
)
async def submit(
    competition: str,
    task: str,
    phase: str,
    request: Request,
    state: StateDep,
    session: SessionDep,
    user: CurrentUser,
) -> dict[str, Any]:
    """Upload a prediction file. It is checked against the gold at once; a valid file is stored and
    queued for scoring (``status`` ``queued``), a bad one is refused with its problems and costs nothing."""
    ref = (competition, task, phase)
    limit = await run_in_threadpool(_limit, state, ref)
    form = await read_form(request, file_limit=limit, too_large=lambda size: too_large(limit, size))
    if "file" not in form.files:
        raise InvalidInput("no file was sent", [{"where": "file", "message": "attach the prediction file as 'file'"}])
    filename, data = form.files["file"]
    upload = intake.Upload(
        data=data,
        filename=filename,
        method_name=form.fields.get("method_name", ""),
        method_description=form.fields.get("method_description", ""),
    )

    def accept() -> dict[str, Any]:
        accepted = intake.submit(session, user, ref, upload, limits=state.limits, gold_cache=state.gold_cache)
        sub = accepted.submission
        found_phase = catalog.get_phase(session, *ref)
        team = session.get(Team, sub.team_id)
        place = queue_stats.queue_places(session, [sub], utcnow()).get(sub.id)
        team_name = team.name if team else None
        out = results.describe(sub, None, phase=found_phase, organizer=False, team_name=team_name, place=place)
        out["quota"] = accepted.quota.to_dict()
        return out

    return await run_in_threadpool(accept)


@router.get(PHASE + "/submissions", response_model=SubmissionList)
def list_submissions(
    competition: str,
    task: str,
    phase: str,
    session: SessionDep,
    user: CurrentUser,
    everyone: Annotated[bool, Query(alias="all", description="everyone's submissions (organizers only)")] = False,
) -> dict[str, Any]:
    """Your team's submissions to the phase, newest first; ``all=true`` lists everyone's (organizers)."""
    found = catalog.get_phase(session, competition, task, phase)
    return {"submissions": results.list_for_phase(session, user, found, everyone=everyone)}


@router.post(PHASE + "/rescore", response_model=RescoreOut, status_code=HTTP_202_ACCEPTED)
def rescore_phase(competition: str, task: str, phase: str, session: SessionDep, user: CurrentUser) -> dict[str, int]:
    """Score every scored or failed submission of the phase again (organizers); old scores are kept."""
    found = catalog.get_phase(session, competition, task, phase)
    return {"queued": changes.rescore_phase(session, user, found)}


@router.get("/submissions/{submission_id}", response_model=SubmissionOut)
def get_submission(submission_id: RowId, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    """One submission: its status, and its metrics and breakdown once scored and visible."""
    return results.show(session, user, submission_id)


@router.post("/submissions/{submission_id}/rescore", response_model=SubmissionOut, status_code=HTTP_202_ACCEPTED)
def rescore(submission_id: RowId, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    """Score the submission again (organizers): a new round, a new score; the old ones are kept."""
    changes.rescore(session, user, submission_id)
    return results.show(session, user, submission_id)


@router.post("/submissions/{submission_id}/choose", response_model=SubmissionOut)
def choose(submission_id: RowId, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    """Make this the submission that counts for your team (phases with selection ``chosen``)."""
    changes.choose(session, user, submission_id)
    return results.show(session, user, submission_id)
