"""The remote worker protocol, under ``/api/v1/worker`` (``app.services.workers.protocol`` for code runs,
``app.services.workers.scoring`` for scoring programs): a worker of a competition's own queue presents its
credential (``Authorization: Bearer pwk_...``) and nothing else.

Not in the OpenAPI document: its one client is ``podium worker --remote`` (``app.worker.remote``), and its
credential is no API token. The file links need no credential: they are signed, short-lived, and good only
while the attempt they were made for holds its run (``workers.links``).
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from pydantic import ValidationError as SchemaError
from starlette.concurrency import run_in_threadpool

from app.services.errors import InvalidInput, NotAuthenticated, UploadTooLarge
from app.services.workers import links, protocol, queues, scoring
from app.services.workers.report import ScoringReport
from app.storage.models import WorkerCredential
from app.storage.types import utcnow
from app.web.deps import RowId, SessionDep, StateDep
from app.web.downloads import streamed
from app.web.schemas.workers import (
    AssignmentOut,
    ClaimIn,
    ClaimOut,
    LeaseIn,
    ReportIn,
    ResultOut,
    ScoringAssignmentOut,
    ScoringReportIn,
    ScoringResultOut,
)
from app.web.uploads import read_form
from sandbox import Limits

PREFIX = "/api/v1/worker"
#: The most a result may carry: a run's whole output limit (predictions and logs together).
RESULT_BYTES = Limits().output_bytes

router = APIRouter(prefix=PREFIX, include_in_schema=False)


def _secret(request: Request) -> str:
    scheme, _, secret = request.headers.get("Authorization", "").strip().partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise NotAuthenticated("send 'Authorization: Bearer <worker credential>'", code="bad_credential")
    return secret.strip()


def credential(request: Request, state: StateDep) -> int:
    """The id of the live credential the request presents (looked up in a short session of its own)."""
    secret = _secret(request)
    with state.db.session(read_only=True) as session:
        return queues.credential_for(session, secret).id


CredentialId = Annotated[int, Depends(credential)]


def _mine(session: SessionDep, credential_id: int) -> WorkerCredential:
    found = session.get(WorkerCredential, credential_id)
    assert found is not None
    return found


@router.post("/claim", response_model=ClaimOut)
def claim(session: SessionDep, state: StateDep, credential_id: CredentialId, body: ClaimIn | None = None) -> ClaimOut:
    """The next job of the worker's queue: a submission to score with its phase's scoring program (the end of a
    submission's way, first), else a code run; both ``null`` when nothing waits."""
    settings = state.settings
    mine = _mine(session, credential_id)
    scored = scoring.claim(
        session, mine, now=utcnow(), lease_seconds=settings.lease_seconds, max_attempts=settings.max_attempts
    )
    if scored is not None:
        return ClaimOut(run=None, scoring=ScoringAssignmentOut.of(scored, f"{PREFIX}/files"))
    assignment = protocol.claim(
        session,
        mine,
        now=utcnow(),
        lease_seconds=settings.lease_seconds,
        max_attempts=settings.max_attempts,
        gpus=body.gpus if body is not None else 0,
    )
    return ClaimOut(run=AssignmentOut.of(assignment, f"{PREFIX}/files") if assignment is not None else None)


@router.post("/runs/{run_id}/heartbeat", response_model=ResultOut)
def heartbeat(
    run_id: RowId, body: LeaseIn, session: SessionDep, state: StateDep, credential_id: CredentialId
) -> ResultOut:
    protocol.heartbeat(
        session,
        _mine(session, credential_id),
        run_id,
        body.lease,
        now=utcnow(),
        lease_seconds=state.settings.lease_seconds,
    )
    return ResultOut(run_id=run_id, status="running")


@router.get("/files/{token}")
def fetch(token: str, session: SessionDep) -> Response:
    blob_id, filename = links.resolve(session, protocol.server_key_or_none(session), token)
    return streamed(session, filename, blob_id, media_type="application/zip")


@router.post("/runs/{run_id}/result", response_model=ResultOut)
async def result(
    run_id: RowId, request: Request, session: SessionDep, state: StateDep, credential_id: CredentialId
) -> ResultOut:
    """The outcome of the worker's attempt: a form with ``lease``, ``report`` (JSON: ``ReportIn``) and the files
    ``predictions`` (absent when the program gave none), ``stdout`` and ``stderr`` (their ends)."""
    too_large = UploadTooLarge(f"a result may hold at most {RESULT_BYTES} bytes", limit=RESULT_BYTES)
    form = await read_form(request, file_limit=RESULT_BYTES, too_large=too_large)
    files = form.files
    try:
        report = ReportIn.model_validate(json.loads(form.fields.get("report", "{}")))
    except (ValueError, SchemaError) as exc:
        raise InvalidInput("the report could not be read", [{"where": "report", "message": str(exc)[:300]}]) from None
    lease = form.fields.get("lease", "")
    predictions = files["predictions"][1] if "predictions" in files else None
    logs = (files.get("stdout", ("", b""))[1], files.get("stderr", ("", b""))[1])

    def take() -> str:
        return protocol.report(
            session,
            _mine(session, credential_id),
            run_id,
            lease,
            protocol.Report(**report.model_dump()),
            predictions,
            logs,
            now=utcnow(),
            gold_cache=state.gold_cache,
            limits=state.limits,
        )

    return ResultOut(run_id=run_id, status=await run_in_threadpool(take))


@router.post("/scorings/{submission_id}/heartbeat", response_model=ScoringResultOut)
def scoring_heartbeat(
    submission_id: RowId, body: LeaseIn, session: SessionDep, state: StateDep, credential_id: CredentialId
) -> ScoringResultOut:
    scoring.heartbeat(
        session,
        _mine(session, credential_id),
        submission_id,
        body.lease,
        now=utcnow(),
        lease_seconds=state.settings.lease_seconds,
    )
    return ScoringResultOut(submission_id=submission_id, status="running")


@router.post("/scorings/{submission_id}/result", response_model=ScoringResultOut)
async def scoring_result(
    submission_id: RowId, request: Request, session: SessionDep, credential_id: CredentialId
) -> ScoringResultOut:
    """What the phase's scoring program gave: a form with ``lease``, ``report`` (JSON: ``ScoringReportIn``) and
    the files ``stdout``, ``stderr`` (their ends) and ``detailed`` (the detailed results' HTML, sanitized again)."""
    too_large = UploadTooLarge(f"a result may hold at most {RESULT_BYTES} bytes", limit=RESULT_BYTES)
    form = await read_form(request, file_limit=RESULT_BYTES, too_large=too_large)
    files = form.files
    try:
        report = ScoringReportIn.model_validate(json.loads(form.fields.get("report", "{}")))
    except (ValueError, SchemaError) as exc:
        raise InvalidInput("the report could not be read", [{"where": "report", "message": str(exc)[:300]}]) from None
    lease = form.fields.get("lease", "")
    logs = (files.get("stdout", ("", b""))[1], files.get("stderr", ("", b""))[1])
    html = files.get("detailed", ("", b""))[1].decode("utf-8", "replace")

    def take() -> str:
        return scoring.report(
            session,
            _mine(session, credential_id),
            submission_id,
            lease,
            ScoringReport(**report.model_dump()),
            logs,
            html,
            now=utcnow(),
        )

    return ScoringResultOut(submission_id=submission_id, status=await run_in_threadpool(take))
