"""Short-lived signed links to what a remote worker's run needs: the program and the phase's inputs (never the
gold). A link names the run, its attempt and the file, is signed with the server's key (``itsdangerous``, the
library the session cookie is signed with) and works for ``LINK_SECONDS`` and only while that attempt holds the
run, so a link that leaked is worth nothing once the run ended or moved to another worker."""

from __future__ import annotations

from datetime import datetime

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy.orm import Session

from app.services.errors import Conflict, Forbidden
from app.storage.models import CodeRun, Phase, RunStatus, Submission

PROGRAM = "program"
INPUTS = "inputs"
LINK_SECONDS = 300
_SALT = "podium-worker-link"


def make(key: bytes, run_id: int, attempt: int, what: str, now: datetime) -> str:
    del now  # the serializer stamps the time itself
    return URLSafeTimedSerializer(key, salt=_SALT).dumps([run_id, attempt, what])


def resolve(session: Session, key: bytes, token: str) -> tuple[int, str]:
    """The blob a link names and the name to give it; refused when forged or expired (403), or when its attempt
    no longer holds the run (409)."""
    try:
        run_id, attempt, what = URLSafeTimedSerializer(key, salt=_SALT).loads(token, max_age=LINK_SECONDS)
    except SignatureExpired as exc:
        raise Forbidden("this link has expired: claim the run again", code="link_expired") from exc
    except (BadSignature, ValueError, TypeError) as exc:
        raise Forbidden("this is not a link of this server", code="bad_link") from exc
    run = session.get(CodeRun, run_id)
    if run is None or run.status != RunStatus.RUNNING or run.attempts != attempt:
        raise Conflict(f"run {run_id} is no longer held by the attempt this link was made for", code="lease_lost")
    if what == PROGRAM:
        return run.program_blob_id, "program.zip"
    submission = session.get(Submission, run.submission_id)
    phase = session.get(Phase, submission.phase_id) if submission is not None else None
    assert phase is not None and phase.code_inputs_blob_id is not None
    return phase.code_inputs_blob_id, "inputs.zip"
