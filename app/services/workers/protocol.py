"""The protocol of a remote worker, as the platform keeps it: claim a run of the worker's queue, renew its lease,
fetch what it needs through short-lived signed links, and return how it ran; no database, broker or server secret
ever leaves the platform.

- ``claim``: the fairest waiting run of the credential's queue (``jobs.fair``, the order the platform's own workers
  follow), taken with the same lease (``code.execution.claim``, ``jobs.lease.take``: one conditional ``UPDATE``, so
  two workers never hold one attempt; a run interrupted ``max_attempts`` times is failed, refunded). The worker
  gets a lease token, an HMAC of (run, attempt, credential) under a key the server keeps in its database
  (``ServerSecret``), and two links (``links``): the program and the phase's inputs, never the gold (scoring stays
  on the platform).
- ``heartbeat`` renews the lease; ``report`` takes the outcome. Both check the token first: one not made for this
  credential and run is refused (403, forged, or another worker's); one whose attempt no longer holds the run
  (its lease was taken over after it expired, or its result was already taken) is refused (409): the attempt
  number is the lease's generation, so a replayed result finds the run finished or held by a later attempt.
- A report's predictions are checked against the phase's public view as an upload's are, then stored and queued
  for the ordinary scoring job (``code.execution.record_success``); a program's failure is the team's cost, a
  worker that says it could not run the program fails the run refunded, as on the platform's own workers.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, select, update
from sqlalchemy.orm import Session

from app.services import server_secrets
from app.services.code import execution, placement
from app.services.code.execution import CodeClaim
from app.services.code.sandboxed import CodeOutcome
from app.services.code.settings import CodeSettings
from app.services.errors import Conflict, Forbidden
from app.services.jobs import fair
from app.services.jobs.claiming import claim_first
from app.services.scoring.gold import GoldCache, gold_of, parsed_gold
from app.services.scoring.validation import validate
from app.services.submissions.limits import Limits as UploadLimits
from app.services.workers import links
from app.services.workers.queues import OWN_WORKERS, in_queue, worker_name
from app.services.workers.report import Report
from app.storage.models import CodeRun, Phase, PhaseQueue, RunStatus, ServerSecret, Submission, WorkerCredential
from sandbox import Limits
from sandbox.limits import MIB
from scorers import ValidationError

SECRET_NAME = "worker-leases"  # noqa: S105  (the name the key is kept under, not a secret)
#: The longest failure sentence a worker may send (the team reads it).
FAILURE_CHARS = 1000


def server_key(session: Session) -> bytes:
    """The key lease tokens and links are signed with, made on first use."""
    return server_secrets.server_key(session, SECRET_NAME)


def server_key_or_none(session: Session) -> bytes:
    """The key, read only (a link checked before any claim made the key is refused: it cannot be genuine)."""
    found = session.get(ServerSecret, SECRET_NAME)
    return bytes.fromhex(found.value) if found is not None else secrets.token_bytes(32)


def _signature(key: bytes, run_id: int, attempt: int, credential_id: int) -> str:
    return hmac.new(key, f"lease:{run_id}:{attempt}:{credential_id}".encode(), hashlib.sha256).hexdigest()


def lease_token(key: bytes, run_id: int, attempt: int, credential_id: int) -> str:
    return f"{run_id}.{attempt}.{_signature(key, run_id, attempt, credential_id)}"


def touch(session: Session, credential: WorkerCredential, now: datetime) -> None:
    """The worker called: its last contact, for the queue's page."""
    session.execute(
        update(WorkerCredential)
        .where(WorkerCredential.id == credential.id)
        .values(last_contact_at=now)
        .execution_options(synchronize_session=False)
    )


@dataclass(frozen=True)
class Assignment:
    """A run given to a remote worker: its lease, how it runs, and where to fetch its files."""

    run_id: int
    lease: str
    lease_seconds: int
    code: dict[str, Any]
    program: str
    inputs: str


def _needing_a_gpu(session: Session, queue_id: int) -> list[int]:
    """The phases of the queue whose programs need a GPU (``code.gpu`` without ``gpu_fallback_cpu``)."""
    phases = session.scalars(
        select(Phase).join(PhaseQueue, PhaseQueue.phase_id == Phase.id).where(PhaseQueue.queue_id == queue_id)
    )
    needing = []
    for phase in phases:
        code = CodeSettings.of(phase.code or {})
        if code.gpu and not code.gpu_fallback_cpu:
            needing.append(phase.id)
    return needing


def claim(
    session: Session,
    credential: WorkerCredential,
    *,
    now: datetime,
    lease_seconds: int,
    max_attempts: int,
    gpus: int = 0,
) -> Assignment | None:
    """Take the fairest waiting run of the credential's queue that this worker can run (a worker without a GPU
    leaves the runs of phases that need one to a worker with one), or ``None`` when none waits."""
    touch(session, credential, now)
    mine = and_(in_queue(credential.queue_id), fair.waiting(CodeRun, now))
    if gpus == 0 and (needing := _needing_a_gpu(session, credential.queue_id)):
        mine = and_(mine, ~CodeRun.submission_id.in_(select(Submission.id).where(Submission.phase_id.in_(needing))))

    def claim(s: Session, row_id: int) -> CodeClaim | None:
        return execution.claim(
            s,
            row_id,
            worker=worker_name(credential.id),
            now=now,
            lease_seconds=lease_seconds,
            max_attempts=max_attempts,
        )

    found = claim_first(session, CodeRun, now, mine, in_queue(credential.queue_id), claim)
    if found is None:
        return None
    held = found[1]
    key = server_key(session)
    return Assignment(
        run_id=held.run_id,
        lease=lease_token(key, held.run_id, held.attempt, credential.id),
        lease_seconds=lease_seconds,
        code=held.code.stored(),
        program=links.make(key, held.run_id, held.attempt, links.PROGRAM, now),
        inputs=links.make(key, held.run_id, held.attempt, links.INPUTS, now),
    )


def _attempt(session: Session, credential: WorkerCredential, run_id: int, token: str) -> int:
    """The attempt the token was made for; refused (403) unless this server made it for this run and credential."""
    run_part, _, rest = token.partition(".")
    attempt_part, _, signature = rest.partition(".")
    if run_part != str(run_id) or not attempt_part.isdigit() or not signature:
        raise Forbidden(f"this lease was not given for run {run_id}", code="not_your_lease")
    attempt = int(attempt_part)
    expected = _signature(server_key(session), run_id, attempt, credential.id)
    if not hmac.compare_digest(expected, signature):
        raise Forbidden(f"this lease was not given to this worker for run {run_id}", code="not_your_lease")
    return attempt


def held(session: Session, credential: WorkerCredential, run_id: int, token: str) -> CodeClaim:
    """The run as this worker's attempt holds it; refused (409) when the attempt lost it."""
    attempt = _attempt(session, credential, run_id, token)
    run = session.get(CodeRun, run_id)
    if run is None or not (
        run.status == RunStatus.RUNNING and run.attempts == attempt and run.worker == worker_name(credential.id)
    ):
        raise Conflict(
            f"run {run_id} is no longer held by this attempt (its lease was taken over, or its result was taken)",
            code="lease_lost",
        )
    submission = session.get(Submission, run.submission_id)
    assert submission is not None
    phase = session.get(Phase, submission.phase_id)
    assert phase is not None and phase.code is not None and phase.code_inputs_blob_id is not None
    return CodeClaim(
        run_id,
        attempt,
        run.submission_id,
        run.program_blob_id,
        phase.code_inputs_blob_id,
        CodeSettings.of(phase.code),
        gold_of(session, phase.id),
    )


def heartbeat(
    session: Session, credential: WorkerCredential, run_id: int, token: str, *, now: datetime, lease_seconds: int
) -> None:
    touch(session, credential, now)
    claim_ = held(session, credential, run_id, token)
    if not execution.heartbeat(session, claim_, now=now, lease_seconds=lease_seconds):
        raise Conflict(f"run {run_id} is no longer held by this attempt", code="lease_lost")


def _outcome(claim_: CodeClaim, report: Report, predictions: bytes | None, logs: tuple[bytes, bytes]) -> CodeOutcome:
    limits = Limits(wall_seconds=claim_.code.time_limit_s, memory_bytes=claim_.code.memory_mb * MIB)
    run = report.as_run(limits, logs)
    if report.failure is not None or predictions is None:
        failure = (report.failure or "Your program gave no predictions.")[:FAILURE_CHARS]
        return CodeOutcome(run, failure=failure, device=report.device)
    return CodeOutcome(run, predictions=predictions, device=report.device)


def report(
    session: Session,
    credential: WorkerCredential,
    run_id: int,
    token: str,
    outcome: Report,
    predictions: bytes | None,
    logs: tuple[bytes, bytes],
    *,
    now: datetime,
    gold_cache: GoldCache,
    limits: UploadLimits,
) -> str:
    """Take the outcome of this worker's attempt: the run's status once recorded (``succeeded``: its predictions
    are queued for scoring; ``failed``; ``queued``: put back to wait for a worker that can run it). Refused when
    the attempt no longer holds the run."""
    touch(session, credential, now)
    claim_ = held(session, credential, run_id, token)
    if outcome.cannot_run is not None:
        reason = f"{OWN_WORKERS}: a worker of queue {credential.queue_id} cannot run programs: {outcome.cannot_run}"
        done, status = placement.release(session, claim_, reason, now=now), RunStatus.QUEUED
    elif outcome.platform_problem is not None:
        reason = f"the organizers' worker could not run the program: {outcome.platform_problem}"
        done = execution.record_platform_failure(session, claim_, reason[:FAILURE_CHARS], now=now)
        status = RunStatus.FAILED
    else:
        result = _outcome(claim_, outcome, predictions, logs)
        if result.predictions is not None:
            try:
                validate(parsed_gold(session, claim_.gold, gold_cache), result.predictions, limits)
            except ValidationError as exc:
                refused = f"Your program's predictions were refused. {exc.summary()}"
                result = CodeOutcome(result.run, failure=refused, device=result.device)
        if result.predictions is not None:
            done, status = execution.record_success(session, claim_, result, now=now), RunStatus.SUCCEEDED
        else:
            done, status = execution.record_program_failure(session, claim_, result, now=now), RunStatus.FAILED
    if not done:
        raise Conflict(f"run {run_id} is no longer held by this attempt", code="lease_lost")
    return str(status)
