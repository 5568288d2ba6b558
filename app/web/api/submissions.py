"""Submitting, and what teams and organizers see of submissions afterwards."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from starlette.status import HTTP_202_ACCEPTED, HTTP_204_NO_CONTENT

from app.services.code import baselines as code_baselines
from app.services.competitions import catalog
from app.services.errors import InvalidInput
from app.services.submissions import changes, deletion, direct, idempotency, intake, results
from app.services.submissions.limits import MAX_METHOD_DESCRIPTION, MAX_METHOD_NAME, too_large
from app.web.deps import CurrentUser, PhaseRef, RowId, SessionDep, StateDep
from app.web.schemas.common import ErrorOut, retry_after_header
from app.web.schemas.submissions import (
    DirectCompleteIn,
    DirectUploadIn,
    DirectUploadOut,
    RescoreOut,
    SubmissionList,
    SubmissionOut,
)
from app.web.uploads import multipart_body, read_form, upload_limit_for

router = APIRouter(tags=["submissions"])

PHASE = "/competitions/{competition}/tasks/{task}/phases/{phase}"

_SUBMISSION_BODY = multipart_body(
    "file",
    "the prediction file, or a zip holding it",
    method_name={"type": "string", "maxLength": MAX_METHOD_NAME},
    method_description={"type": "string", "maxLength": MAX_METHOD_DESCRIPTION},
)

_REFUSALS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": text}
    for code, text in {
        401: "no valid token",
        403: "not allowed to take part",
        409: "the phase is closed (the answer says when it opens or when it closed), or the "
        "`Idempotency-Key` came before with another file or phase (`idempotency_key_reused`)",
        413: "the file is over the phase's size limit",
        422: "the file was refused: `problems` names each mistake (line, key, expected)",
        429: "the team's limit is used up (`resets_at` and the `Retry-After` header say when the daily limit "
        "resets; neither for a limit over the whole phase)",
    }.items()
}
_REFUSALS[429]["headers"] = retry_after_header(required=False)


@router.post(
    PHASE + "/submissions",
    status_code=HTTP_202_ACCEPTED,
    response_model=SubmissionOut,
    openapi_extra=_SUBMISSION_BODY,
    responses=_REFUSALS,
)
async def submit(
    ref: PhaseRef,
    request: Request,
    response: Response,
    state: StateDep,
    session: SessionDep,
    user: CurrentUser,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            # What ``idempotency.checked_key`` takes (it refuses the rest, naming the header), less spaces
            # at either end (HTTP drops those): declared in the document, checked in one place.
            json_schema_extra={"pattern": r"^[\x21-\x7e]([\x20-\x7e]{0,253}[\x21-\x7e])?$"},
            description="Any string of 1 to 255 printable ASCII characters, new for each upload. The same key "
            "from the same user within 24 hours returns the submission it made (same id, same answer, with "
            "the header `Idempotent-Replayed: true`) instead of storing the file again; with another file or "
            "phase it is refused (409).",
        ),
    ] = None,
) -> SubmissionOut:
    """Upload a prediction file. It is checked against the gold at once; a valid file is stored and
    queued for scoring (``status`` ``queued``), a bad one is refused with its problems and costs nothing.
    Send an ``Idempotency-Key`` to make a retry after a lost answer safe."""
    key = idempotency.checked_key(idempotency_key)
    limit = await run_in_threadpool(upload_limit_for, state, ref)
    form = await read_form(request, file_limit=limit, too_large=lambda size: too_large(limit, size))
    upload = form.upload()
    if upload is None:
        raise InvalidInput("no file was sent", [{"where": "file", "message": "attach the prediction file as 'file'"}])

    def accept() -> SubmissionOut:
        accepted = intake.submit(
            session, user, ref, upload, limits=state.limits, gold_cache=state.gold_cache, key=key, handoff=state.handoff
        )
        if accepted.replayed:
            response.headers["Idempotent-Replayed"] = "true"
        return SubmissionOut.of(results.describe_upload(session, accepted.submission), quota=accepted.quota)

    return await run_in_threadpool(accept)


_DIRECT_REFUSALS: dict[int | str, dict[str, Any]] = {
    **_REFUSALS,
    409: {
        "model": ErrorOut,
        "description": "the phase is closed, or `direct_upload_unavailable`: this server keeps files outside object "
        "storage (send the file to `.../submissions`)",
    },
    413: {"model": ErrorOut, "description": "the declared size is over the phase's size limit or a storage quota"},
}


@router.post(PHASE + "/direct-uploads", response_model=DirectUploadOut, responses=_DIRECT_REFUSALS)
def start_direct_upload(
    ref: PhaseRef, body: DirectUploadIn, request: Request, state: StateDep, session: SessionDep, user: CurrentUser
) -> DirectUploadOut:
    """Start sending a large file straight to object storage (servers whose files are in S3). Everything that
    needs no byte of the file is checked first (the phase open, the size limit, the team's limits and storage
    quotas, with the declared size); the answer holds a presigned link per part. Send each part with ``PUT``,
    then ``POST .../direct-uploads/complete`` with the ETags: the file is read back, checked against the
    declared size and sha256, and submitted as an upload to ``.../submissions`` is."""
    declared = direct.Declared(body.size, body.sha256, body.filename, body.method_name, body.method_description)
    hours = state.settings.direct_upload_hours
    started = direct.start(session, user, ref, declared, limits=state.limits, hours=hours)
    return DirectUploadOut(
        upload=started.token,
        part_size=started.part_size,
        parts=started.urls,
        expires_at=started.expires_at,
        complete_url=str(request.url_for("complete_direct_upload", **request.path_params)),
    )


@router.post(
    PHASE + "/direct-uploads/complete",
    status_code=HTTP_202_ACCEPTED,
    response_model=SubmissionOut,
    responses=_DIRECT_REFUSALS,
)
def complete_direct_upload(
    ref: PhaseRef,
    body: DirectCompleteIn,
    response: Response,
    state: StateDep,
    session: SessionDep,
    user: CurrentUser,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> SubmissionOut:
    """Complete a direct upload: an incomplete or altered file (its size or sha256 not those declared) is refused
    (422, ``direct_upload_incomplete`` or ``direct_upload_mismatch``) and leaves nothing; a whole one becomes the
    submission an upload of the same file makes (same checks, same validation, same answer)."""
    accepted = direct.complete(
        session,
        user,
        ref,
        body.upload,
        body.etags,
        limits=state.limits,
        hours=state.settings.direct_upload_hours,
        gold_cache=state.gold_cache,
        handoff=state.handoff,
        key=idempotency.checked_key(idempotency_key),
    )
    if accepted.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return SubmissionOut.of(results.describe_upload(session, accepted.submission), quota=accepted.quota)


_PROGRAM_BODY = multipart_body(
    "file",
    "the program, a zip (as a team uploads it to the phase)",
    name={"type": "string", "maxLength": MAX_METHOD_NAME},
    method_description={"type": "string", "maxLength": MAX_METHOD_DESCRIPTION},
)


@router.post(
    PHASE + "/baseline-programs",
    status_code=HTTP_202_ACCEPTED,
    response_model=SubmissionOut,
    openapi_extra=_PROGRAM_BODY,
    responses={
        401: {"model": ErrorOut, "description": "no valid token"},
        403: {"model": ErrorOut, "description": "not an organizer of the competition"},
        409: {"model": ErrorOut, "description": "the phase runs no programs (no `code:` in its bundle)"},
        413: {"model": ErrorOut, "description": "the file is over the phase's size limit"},
        422: {"model": ErrorOut, "description": "not a zip, or a name that is too long"},
    },
)
async def submit_baseline_program(
    ref: PhaseRef, request: Request, state: StateDep, session: SessionDep, user: CurrentUser
) -> SubmissionOut:
    """Organizers: upload a program as a baseline of a code phase. It runs as a team's program does (status
    ``awaiting_run``, then scored) and its entry is marked as a baseline; it counts against no team's limits."""
    limit = await run_in_threadpool(upload_limit_for, state, ref)
    form = await read_form(request, file_limit=limit, too_large=lambda size: too_large(limit, size))
    upload = form.upload()
    if upload is None:
        raise InvalidInput("no file was sent", [{"where": "file", "message": "attach the program's zip as 'file'"}])
    program = intake.Upload(
        upload.content,
        upload.filename,
        method_name=form.fields.get("name", ""),
        method_description=form.fields.get("method_description", ""),
    )

    def accept() -> SubmissionOut:
        stored = code_baselines.submit_baseline(session, user, ref, program)
        return SubmissionOut.of(results.describe_upload(session, stored))

    return await run_in_threadpool(accept)


@router.get(PHASE + "/submissions", response_model=SubmissionList)
def list_submissions(
    competition: str,
    task: str,
    phase: str,
    session: SessionDep,
    user: CurrentUser,
    everyone: Annotated[bool, Query(alias="all", description="everyone's submissions (organizers only)")] = False,
) -> SubmissionList:
    """Your team's submissions to the phase, newest first; ``all=true`` lists everyone's (organizers)."""
    phase_row = catalog.get_phase(session, competition, task, phase)
    return SubmissionList.of(results.list_for_phase(session, user, phase_row, everyone=everyone))


@router.get("/me/submissions", response_model=SubmissionList)
def my_submissions(session: SessionDep, user: CurrentUser) -> SubmissionList:
    """Your teams' submissions across every competition, newest first (the newest 500)."""
    return SubmissionList.of(results.list_for_user(session, user))


@router.post(PHASE + "/rescore", response_model=RescoreOut, status_code=HTTP_202_ACCEPTED)
def rescore_phase(competition: str, task: str, phase: str, session: SessionDep, user: CurrentUser) -> RescoreOut:
    """Score every scored or failed submission of the phase again (organizers); old scores are kept."""
    phase_row = catalog.get_phase(session, competition, task, phase)
    return RescoreOut(queued=changes.rescore_phase(session, user, phase_row))


@router.get("/submissions/{submission_id}", response_model=SubmissionOut)
def get_submission(submission_id: RowId, session: SessionDep, user: CurrentUser) -> SubmissionOut:
    """One submission: its status, and its metrics and breakdown once scored and visible."""
    return SubmissionOut.of(results.show(session, user, submission_id))


@router.delete(
    "/submissions/{submission_id}",
    status_code=HTTP_204_NO_CONTENT,
    response_class=Response,
    responses={403: {"model": ErrorOut}, 404: {"model": ErrorOut}, 409: {"model": ErrorOut}},
)
def delete_submission(submission_id: RowId, session: SessionDep, user: CurrentUser) -> Response:
    """Delete one of your team's submissions, once it is scored or failed: 409 ``on_final_ranking`` for one a
    revealed board's final ranking shows (kept for the record), 403 for another team's."""
    deletion.delete_submission(session, user, submission_id)
    return Response(status_code=HTTP_204_NO_CONTENT)


@router.post("/submissions/{submission_id}/rescore", response_model=SubmissionOut, status_code=HTTP_202_ACCEPTED)
def rescore(submission_id: RowId, session: SessionDep, user: CurrentUser) -> SubmissionOut:
    """Score the submission again (organizers): a new round, a new score; the old ones are kept."""
    changes.rescore(session, user, submission_id)
    return SubmissionOut.of(results.show(session, user, submission_id))


@router.post("/submissions/{submission_id}/choose", response_model=SubmissionOut)
def choose(submission_id: RowId, session: SessionDep, user: CurrentUser) -> SubmissionOut:
    """Make this the submission that counts for your team (phases with selection ``chosen``), or mark it as one of
    your team's final submissions (phases with ``final_submissions``: 409 ``too_many_final`` beyond that many)."""
    changes.choose(session, user, submission_id)
    return SubmissionOut.of(results.show(session, user, submission_id))


@router.post("/submissions/{submission_id}/unchoose", response_model=SubmissionOut)
def unchoose(submission_id: RowId, session: SessionDep, user: CurrentUser) -> SubmissionOut:
    """Take your team's mark off this submission (no longer final, or no longer the chosen one)."""
    changes.unchoose(session, user, submission_id)
    return SubmissionOut.of(results.show(session, user, submission_id))
