"""Short-lived signed links to what a remote worker's job needs: for a code run the program and the phase's inputs
(never the gold); for a scoring the phase's scoring program (``workers.scoring``) the submitted file and the
phase's gold (program and reference data: the organizers' own, sent only to their own workers, only while the
attempt scoring that submission holds it). A link names the job, its attempt and the file, is signed with the
server's key (``itsdangerous``, the library the session cookie is signed with) and works for ``LINK_SECONDS`` and
only while that attempt holds the job, so a link that leaked is worth nothing once the job ended or moved to
another worker."""

from __future__ import annotations

from datetime import datetime

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.errors import Conflict, Forbidden
from app.storage.models import CodeRun, Phase, PhaseQueue, RunStatus, Submission, SubmissionStatus

PROGRAM = "program"
INPUTS = "inputs"
#: A scoring's files: the submitted file, and the gold (only for a submission its phase scores remotely).
SUBMISSION = "submission"
GOLD = "gold"
#: What a scoring's link names before its submission (a code run's names the run alone).
SCORING = "score"
LINK_SECONDS = 300
_SALT = "podium-worker-link"


def make(key: bytes, run_id: int, attempt: int, what: str, now: datetime) -> str:
    del now  # the serializer stamps the time itself
    return URLSafeTimedSerializer(key, salt=_SALT).dumps([run_id, attempt, what])


def make_scoring(key: bytes, submission_id: int, attempt: int, what: str) -> str:
    return URLSafeTimedSerializer(key, salt=_SALT).dumps([SCORING, submission_id, attempt, what])


def resolve(session: Session, key: bytes, token: str) -> tuple[int, str]:
    """The blob a link names and the name to give it; refused when forged or expired (403), or when its attempt
    no longer holds the run (409)."""
    try:
        named = URLSafeTimedSerializer(key, salt=_SALT).loads(token, max_age=LINK_SECONDS)
        if isinstance(named, list) and len(named) == 4 and named[0] == SCORING:
            return _scoring(session, *named[1:])
        run_id, attempt, what = named
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


def _scoring(session: Session, submission_id: int, attempt: int, what: str) -> tuple[int, str]:
    """A scoring's file, while its attempt holds the submission and its phase still sends its scoring to a
    competition's own queue (a phase moved back to the platform gives its gold to no remote worker)."""
    submission = session.get(Submission, submission_id)
    if (
        submission is None
        or submission.status != SubmissionStatus.RUNNING
        or submission.attempts != attempt
        or not session.scalar(
            select(PhaseQueue.scoring).where(PhaseQueue.phase_id == submission.phase_id, PhaseQueue.scoring.is_(True))
        )
    ):
        raise Conflict(f"submission {submission_id} is no longer scored by this attempt", code="lease_lost")
    if what == SUBMISSION:
        return submission.blob_id, "submission.zip"
    phase = session.get(Phase, submission.phase_id)
    assert phase is not None and what == GOLD
    return phase.gold_blob_id, "gold.zip"
