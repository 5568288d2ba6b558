"""Program scoring on a competition's own queue: a phase scored by its organizers' program (the ``program`` scorer
of CodaLab and Codabench imports) whose ``PhaseQueue.scoring`` is set is scored by the remote workers of that
queue, not by the platform's ``scoring`` queue (``routing.on_platform`` leaves its submissions to them).

The protocol is the code runs' (``protocol``), with the submission as the leased row: ``claim`` takes the fairest
submission waiting to be scored on the credential's queue with the scoring job's own claim (``scoring.steps.claim``:
the same lease, the same ``max_attempts``), and gives a lease token (an HMAC of (submission, attempt, credential),
under its own prefix, so that a code run's token never passes for a scoring's) and two links (``links``): the
submitted file and the phase's gold (its scoring program and reference data). The gold goes only to a worker of
the queue the phase itself sends its scoring to, only while that worker's attempt holds the submission: it is the
organizers' own, and it never reaches a worker of a phase that does not score there.

``report`` takes what the program gave (``ScoringReport``) and stores it as the platform's own scoring job does
(``scoring.programs.record``): the platform reads the scores through the phase's scorer (the leaderboard's
columns), keeps only numbers it can store, and sanitizes the detailed results again (``nh3``: the worker's HTML
is not trusted more than a program's). A program that failed on the team's file costs the team; a program that
cannot be run as stored fails the submission refunded; a worker whose sandbox cannot run programs puts the
submission back (its attempt not counted). A token not made for this credential is refused (403), one whose
attempt lost the submission (taken over after its lease, or already reported) is refused (409).
"""

from __future__ import annotations

import hashlib
import hmac
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import nh3
from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from app.services.errors import Conflict, Forbidden
from app.services.jobs import fair, lease
from app.services.jobs.claiming import claim_first
from app.services.jobs.routing import scored_by
from app.services.scoring import programs, steps
from app.services.scoring.gold import gold_of
from app.services.scoring.steps import Claim
from app.services.workers import links
from app.services.workers.protocol import server_key, touch
from app.services.workers.queues import worker_name
from app.services.workers.report import ScoringReport
from app.storage.models import PhaseQueue, Submission, SubmissionStatus, WorkerCredential
from codalab.bundle import DEFAULT_TIME_LIMIT
from codalab.program import ProgramOutcome, storable
from sandbox import Limits
from scorers import get_scorer
from scorers.generic.program import ProgramFailed, ProgramScorer

#: The most a report may name: scores, and characters of a failure sentence or of the detailed results.
MAX_SCORES = 200
FAILURE_CHARS = 1000
DETAIL_CHARS = 20_000
HTML_CHARS = 1024 * 1024


@dataclass(frozen=True)
class ScoringAssignment:
    """A submission given to a remote worker to score: its lease, the program's options and time limit, and where
    to fetch the submitted file and the phase's gold."""

    submission_id: int
    lease: str
    lease_seconds: int
    scorer_options: dict[str, Any]
    time_limit: int
    submission: str
    gold: str


def _signature(key: bytes, submission_id: int, attempt: int, credential_id: int) -> str:
    message = f"score:{submission_id}:{attempt}:{credential_id}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def lease_token(key: bytes, submission_id: int, attempt: int, credential_id: int) -> str:
    return f"{submission_id}.{attempt}.{_signature(key, submission_id, attempt, credential_id)}"


def claim(
    session: Session, credential: WorkerCredential, *, now: datetime, lease_seconds: int, max_attempts: int
) -> ScoringAssignment | None:
    """Take the fairest submission waiting to be scored on the credential's queue, or ``None`` when none waits."""
    touch(session, credential, now)
    scored_here = select(PhaseQueue.phase_id).where(
        PhaseQueue.queue_id == credential.queue_id, PhaseQueue.scoring.is_(True)
    )
    if session.scalar(scored_here.limit(1)) is None:  # most queues score nothing: no fair order to compute
        return None
    mine = scored_by(credential.queue_id)

    def claim(s: Session, row_id: int) -> Claim | None:
        return steps.claim(
            s,
            row_id,
            worker=worker_name(credential.id),
            now=now,
            lease_seconds=lease_seconds,
            max_attempts=max_attempts,
        )

    found = claim_first(session, Submission, now, and_(mine, fair.waiting(Submission, now)), mine, claim)
    if found is None:
        return None
    held = found[1]
    key = server_key(session)
    return ScoringAssignment(
        submission_id=held.submission_id,
        lease=lease_token(key, held.submission_id, held.attempt, credential.id),
        lease_seconds=lease_seconds,
        scorer_options=dict(held.gold.scorer_options),
        time_limit=held.gold.time_limit or DEFAULT_TIME_LIMIT,
        submission=links.make_scoring(key, held.submission_id, held.attempt, links.SUBMISSION),
        gold=links.make_scoring(key, held.submission_id, held.attempt, links.GOLD),
    )


def held(session: Session, credential: WorkerCredential, submission_id: int, token: str) -> Claim:
    """The scoring as this worker's attempt holds it; refused (403) unless the token is this server's for this
    submission and credential, (409) when the attempt lost the submission."""
    sub_part, _, rest = token.partition(".")
    attempt_part, _, signature = rest.partition(".")
    if sub_part != str(submission_id) or not attempt_part.isdigit() or not signature:
        raise Forbidden(f"this lease was not given for submission {submission_id}", code="not_your_lease")
    attempt = int(attempt_part)
    expected = _signature(server_key(session), submission_id, attempt, credential.id)
    if not hmac.compare_digest(expected, signature):
        raise Forbidden(
            f"this lease was not given to this worker for submission {submission_id}", code="not_your_lease"
        )
    row = session.get(Submission, submission_id)
    if row is None or not (
        row.status == SubmissionStatus.RUNNING and row.attempts == attempt and row.worker == worker_name(credential.id)
    ):
        raise Conflict(
            f"submission {submission_id} is no longer scored by this attempt (its lease was taken over, or its "
            "result was taken)",
            code="lease_lost",
        )
    return Claim(submission_id, attempt, row.scoring_round, row.blob_id, gold_of(session, row.phase_id), row.sha256)


def heartbeat(
    session: Session, credential: WorkerCredential, submission_id: int, token: str, *, now: datetime, lease_seconds: int
) -> None:
    touch(session, credential, now)
    claim_ = held(session, credential, submission_id, token)
    if not steps.heartbeat(session, claim_, now=now, lease_seconds=lease_seconds):
        raise Conflict(f"submission {submission_id} is no longer scored by this attempt", code="lease_lost")


def _release(session: Session, claim_: Claim) -> bool:
    """Put the submission back to wait for a worker that can run programs, its attempt not counted."""
    return lease.put_back(session, Submission, claim_.submission_id, claim_.attempt)


def _program_outcome(claim_: Claim, report: ScoringReport, logs: tuple[bytes, bytes], html: str) -> ProgramOutcome:
    scores: dict[str, float] = {}
    ignored = {str(k)[:100]: str(v)[:200] for k, v in list(report.ignored.items())[:MAX_SCORES]}
    for key, value in list(report.scores.items())[:MAX_SCORES]:
        number = storable(value)
        if isinstance(number, float) and math.isfinite(number):
            scores[str(key)[:100]] = number
        else:
            ignored[str(key)[:100]] = str(number)[:200]
    run = None
    if report.ran:
        limits = Limits(wall_seconds=claim_.gold.time_limit or DEFAULT_TIME_LIMIT)
        run = report.as_run(limits, logs)
    return ProgramOutcome(
        scores,
        run,
        nh3.clean(html[:HTML_CHARS]) if html else None,
        failure=report.failure[:FAILURE_CHARS] if report.failure is not None else None,
        detail=report.detail[:DETAIL_CHARS] if report.detail is not None else None,
        ignored=ignored,
    )


def report(
    session: Session,
    credential: WorkerCredential,
    submission_id: int,
    token: str,
    outcome: ScoringReport,
    logs: tuple[bytes, bytes],
    html: str,
    *,
    now: datetime,
) -> str:
    """Take what the program gave for this worker's attempt: the submission's status once recorded (``scored``,
    ``failed``, or ``queued``: put back to wait for a worker that can run programs)."""
    touch(session, credential, now)
    claim_ = held(session, credential, submission_id, token)
    if outcome.cannot_run is not None:
        done, status = _release(session, claim_), SubmissionStatus.QUEUED
    elif outcome.problem is not None:
        problem = f"The organizers' worker could not run the scoring program: {outcome.problem[:FAILURE_CHARS]}"
        done, status = programs.record(session, claim_, programs.ProgramResult(None, problem=problem), now=now), None
    else:
        ran = _program_outcome(claim_, outcome, logs, html)
        scorer = get_scorer(claim_.gold.scorer, claim_.gold.scorer_options)
        assert isinstance(scorer, ProgramScorer)
        try:
            result = programs.ProgramResult(ran, scorer.report(scorer.scores(ran)))
        except ProgramFailed as failed:
            result = programs.ProgramResult(failed.outcome)
        done, status = programs.record(session, claim_, result, now=now), None
    if not done:
        raise Conflict(f"submission {submission_id} is no longer scored by this attempt", code="lease_lost")
    if status is None:
        status = session.scalar(select(Submission.status).where(Submission.id == submission_id))
    return str(status)
