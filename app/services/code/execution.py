"""The steps of a code run, each in the caller's transaction (the job, ``app.services.code.job``, runs them).

``claim`` takes the run's lease and reads what the program needs (plain values); ``fetch`` gives the
program and the phase's inputs as local files (streamed from the blob store, never read whole); the program
runs outside any transaction; then one of:

- ``record_success``: how it ran, its predictions become the submission's file, and the submission is
  queued for the ordinary scoring job (validated there against the public view, scored, ranked);
- ``record_program_failure``: the program's fault (its exit, its limits, no or invalid output): the run
  and the submission fail, the team reads why in plain words, and the upload stays counted;
- ``record_platform_failure`` / ``give_up``: the platform's (no sandbox, a database that kept failing,
  a run interrupted ``max_attempts`` times): both fail and the team's submission is given back.

Every write is guarded by the run's lease (``lease.finish``), and the submission is changed only while
it awaits its run, so a worker whose lease expired changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from app.services.code.sandboxed import CodeOutcome
from app.services.code.settings import CodeSettings
from app.services.jobs import lease
from app.services.jobs.enqueue import enqueue_after_commit
from app.services.scoring.gold import GoldRef, gold_of
from app.services.scoring.job import SCORE_SUBMISSION
from app.services.scoring.steps import ERROR_CHARS, PLATFORM_FAILURE
from app.storage.blobs import fetch_blob, put_blob
from app.storage.models import CodeRun, Phase, RunStatus, Submission, SubmissionStatus

#: How much of the end of each log is stored.
LOG_CHARS = 64 * 1024


@dataclass(frozen=True)
class CodeClaim:
    """A claimed run: everything it needs, as plain values."""

    run_id: int
    attempt: int
    submission_id: int
    program_blob_id: int
    inputs_blob_id: int
    code: CodeSettings
    gold: GoldRef


def claim(
    session: Session, run_id: int, *, worker: str, now: datetime, lease_seconds: int, max_attempts: int
) -> CodeClaim | None:
    """Take the run, or ``None`` if it is not waiting; a run interrupted ``max_attempts`` times is failed instead."""
    row = lease.take(
        session,
        CodeRun,
        run_id,
        worker=worker,
        now=now,
        lease_seconds=lease_seconds,
        returning=(CodeRun.submission_id, CodeRun.program_blob_id),
    )
    if row is None:
        return None
    submission = session.get(Submission, row.submission_id)
    assert submission is not None
    phase = session.get(Phase, submission.phase_id)
    assert phase is not None and phase.code is not None and phase.code_inputs_blob_id is not None
    held = CodeClaim(
        run_id,
        row.attempts,
        row.submission_id,
        row.program_blob_id,
        phase.code_inputs_blob_id,
        CodeSettings.of(phase.code),
        gold_of(session, phase.id),
    )
    if held.attempt > max_attempts:
        reason = f"the program's run was interrupted {max_attempts} times (worker crash or timeout); gave up"
        record_platform_failure(session, held, reason, now=now)
        return None
    return held


def heartbeat(session: Session, held: CodeClaim, *, now: datetime, lease_seconds: int) -> bool:
    return lease.renew(session, CodeRun, held.run_id, held.attempt, now=now, lease_seconds=lease_seconds)


def fetch(session: Session, held: CodeClaim, folder: Path) -> tuple[Path, Path]:
    """The program's zip and the phase's inputs as local files: the disk store's own, else copies in ``folder``."""
    return (
        fetch_blob(session, held.program_blob_id, folder / "program.zip"),
        fetch_blob(session, held.inputs_blob_id, folder / "inputs.zip"),
    )


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")[-LOG_CHARS:].replace("\x00", "")


def _how_it_ran(outcome: CodeOutcome) -> dict[str, Any]:
    run = outcome.run
    if run is None:
        return {}
    return {
        "exit_code": run.exit_code,
        "signal": run.signal,
        "timed_out": run.timed_out,
        "out_of_memory": run.out_of_memory,
        "wall_seconds": run.wall_seconds,
        "peak_memory_bytes": run.peak_memory_bytes,
        "device": outcome.device,
        "stdout": _text(run.stdout),
        "stderr": _text(run.stderr),
        "stdout_bytes": run.stdout_bytes,
        "stderr_bytes": run.stderr_bytes,
    }


def _end(session: Session, held: CodeClaim, status: RunStatus, now: datetime, **values: Any) -> bool:
    return lease.finish(session, CodeRun, held.run_id, held.attempt, status, now=now, **values)


def _submission(session: Session, submission_id: int, **values: Any) -> None:
    session.execute(
        update(Submission)
        .where(Submission.id == submission_id, Submission.status == SubmissionStatus.AWAITING_RUN)
        .values(**values)
        .execution_options(synchronize_session=False)
    )


def record_success(session: Session, held: CodeClaim, outcome: CodeOutcome, *, now: datetime) -> bool:
    """The predictions become the submission's file, queued for scoring; ``False`` if the claim was lost."""
    assert outcome.predictions is not None
    sentence = f"The program ran: {outcome.run.describe()}." if outcome.run is not None else ""
    if not _end(session, held, RunStatus.SUCCEEDED, now, outcome=sentence, **_how_it_ran(outcome)):
        return False
    blob = put_blob(session, outcome.predictions)
    _submission(session, held.submission_id, blob_id=blob.id, status=SubmissionStatus.QUEUED)
    enqueue_after_commit(session, SCORE_SUBMISSION, held.submission_id)
    return True


def record_program_failure(session: Session, held: CodeClaim, outcome: CodeOutcome, *, now: datetime) -> bool:
    """The program's fault: the run and the submission fail, the upload stays counted."""
    sentence = outcome.failure or "Your program gave no predictions."
    if not _end(session, held, RunStatus.FAILED, now, outcome=sentence, **_how_it_ran(outcome)):
        return False
    _submission(
        session,
        held.submission_id,
        status=SubmissionStatus.FAILED,
        finished_at=now,
        participant_message=sentence,
        organizer_message=sentence,
        quota_refunded=False,
    )
    return True


def _platform(session: Session, submission_id: int, reason: str, now: datetime) -> None:
    _submission(
        session,
        submission_id,
        status=SubmissionStatus.FAILED,
        finished_at=now,
        participant_message=PLATFORM_FAILURE.replace("Scoring failed", "Running your program failed"),
        organizer_message=reason[:ERROR_CHARS],
        quota_refunded=True,
    )


def record_platform_failure(session: Session, held: CodeClaim, reason: str, *, now: datetime) -> bool:
    """The platform's fault: both fail, the submission is given back, the organizers read ``reason``."""
    if not _end(session, held, RunStatus.FAILED, now, outcome="The program could not be run on our side."):
        return False
    _platform(session, held.submission_id, reason, now)
    return True


def give_up(session: Session, run_id: int, *, now: datetime, reason: str) -> bool:
    """Fail a run that could not even be claimed (the database kept failing), refunded."""
    run = session.get(CodeRun, run_id)
    if run is None or not lease.give_up(
        session, CodeRun, run_id, RunStatus.FAILED, now=now, outcome="The program could not be run on our side."
    ):
        return False
    _platform(session, run.submission_id, reason, now)
    return True
