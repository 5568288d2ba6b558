"""The steps of a baseline job, each in the caller's transaction (the job is ``app.services.baselines.job``).

The job ``claim_run``s the run (a compare-and-set, with a lease), reads its ``load_inputs``, runs
the system outside any transaction while ``store_report`` stores its progress and log every second or so
(extending the lease and answering whether to stop), then records one outcome:

* ``check_output`` validates the output against the phase's gold exactly as an upload is validated
  (``app.services.scoring.validation``),
  and ``record_success`` stores it as a submission of the competition (no team, no quota) flagged
  as a baseline, queued for the ordinary scoring job;
* ``record_failure`` keeps the error for the organizers; ``record_cancelled`` ends a stopped run.

Each outcome ends the run's log with a closing line (``closed_log``): finished, failed or cancelled, in how
many seconds, and what was written or why it stopped, so a log never stops at the system's last line.

The run's row is a job row with a lease (``app.services.jobs.lease``): every write after the claim
is guarded by the claim's attempt number, so a worker whose lease expired and whose run was
resumed elsewhere changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.services.baselines.views import title_of
from app.services.jobs import lease
from app.services.jobs.enqueue import enqueue_after_commit
from app.services.scoring.gold import GoldCache, GoldRef, gold_of, parsed_gold
from app.services.scoring.job import SCORE_SUBMISSION
from app.services.scoring.validation import validate
from app.services.submissions.limits import MAX_FILE_NAME, Limits
from app.storage.blobs import put_blob, read_blob, sha256_hex
from app.storage.models import (
    BaselineRun,
    Phase,
    PhaseFile,
    RunStatus,
    Submission,
    SubmissionStatus,
    TaskFile,
    TaskFileKind,
)
from baselines import BaselineInputs, UnknownBaseline, baseline_class
from scorers import ScorerError, ValidationError

#: The log kept on a run: its last lines, at most this many and this many bytes (UTF-8).
LOG_LINES = 50
LOG_BYTES = 8 * 1024
#: A longer log line is cut (a system printing a whole file must not push every other line out).
LINE_CHARS = 1000
ERROR_CHARS = 20_000

Verdict = Literal["go", "stop", "lost"]


class OutputRefused(Exception):
    """The system's output cannot become a submission (it fails validation, or the gold does not parse)."""


@dataclass(frozen=True)
class RunClaim:
    """A claimed run: what the job needs, as plain values."""

    run_id: int
    attempt: int
    phase_id: int
    baseline: str
    version: str
    options: dict[str, Any]
    gold: GoldRef
    requested_by: int | None


def _held(held: RunClaim) -> Any:
    return lease.holds(BaselineRun, held.run_id, held.attempt)


def claim_run(
    session: Session, run_id: int, *, worker: str, now: datetime, lease_seconds: int, max_attempts: int
) -> RunClaim | None:
    """Take the run, or ``None`` if it is not waiting (finished, or held by a live worker).

    A run whose cancellation was asked while no worker held it ends here as ``cancelled``; one
    interrupted ``max_attempts`` times is failed instead of started again. Each attempt starts its
    progress from zero and notes itself in the log.
    """
    session.execute(
        update(BaselineRun)
        .where(BaselineRun.id == run_id, lease.claimable(BaselineRun, now), BaselineRun.cancel_requested.is_(True))
        .values(status=RunStatus.CANCELLED, finished_at=now, lease_expires_at=None)
        .execution_options(synchronize_session=False)
    )
    row = lease.take(
        session,
        BaselineRun,
        run_id,
        worker=worker,
        now=now,
        lease_seconds=lease_seconds,
        where=(BaselineRun.cancel_requested.is_(False),),
        values={"done": 0, "total": None, "progress_at": None},
    )
    if row is None:
        return None
    run = session.get(BaselineRun, run_id, populate_existing=True)
    assert run is not None
    held = RunClaim(
        run_id=run.id,
        attempt=row.attempts,
        phase_id=run.phase_id,
        baseline=run.baseline,
        version=run.baseline_version,
        options=dict(run.options or {}),
        gold=gold_of(session, run.phase_id),
        requested_by=run.requested_by,
    )
    if held.attempt > max_attempts:
        record_failure(
            session, held, now=now, error=f"the run was interrupted {max_attempts} times (worker crash); gave up"
        )
        return None
    run.log_tail = trim_log(run.log_tail, [f"{now:%H:%M:%S} attempt {held.attempt} started on {worker}"])
    session.flush()
    return held


def load_inputs(session: Session, held: RunClaim) -> BaselineInputs:
    """The task's training files and resources and the phase's public files, by name."""
    task_id = select(Phase.task_id).where(Phase.id == held.phase_id).scalar_subquery()
    task_files = session.execute(
        select(TaskFile.kind, TaskFile.name, TaskFile.blob_id)
        .where(TaskFile.task_id == task_id)
        .order_by(TaskFile.position, TaskFile.id)
    ).all()
    phase_files = session.execute(
        select(PhaseFile.name, PhaseFile.blob_id)
        .where(PhaseFile.phase_id == held.phase_id)
        .order_by(PhaseFile.position, PhaseFile.id)
    ).all()
    return BaselineInputs(
        scorer=held.gold.scorer,
        training={r.name: read_blob(session, r.blob_id) for r in task_files if r.kind == TaskFileKind.TRAINING},
        inputs={row.name: read_blob(session, row.blob_id) for row in phase_files},
        resources={r.name: read_blob(session, r.blob_id) for r in task_files if r.kind == TaskFileKind.RESOURCE},
    )


# -- while it runs ---------------------------------------------------------------------------------


def trim_log(existing: str, lines: Sequence[str]) -> str:
    """``existing`` plus ``lines``, cut to the last ``LOG_LINES`` lines and ``LOG_BYTES`` bytes."""
    kept = existing.splitlines() if existing else []
    for line in lines:
        for part in line.splitlines() or [""]:
            kept.append(part if len(part) <= LINE_CHARS else part[: LINE_CHARS - 1] + "…")
    kept = kept[-LOG_LINES:]
    size = sum(len(line.encode()) + 1 for line in kept)
    start = 0
    while size > LOG_BYTES and start < len(kept):
        size -= len(kept[start].encode()) + 1
        start += 1
    return "".join(line + "\n" for line in kept[start:])


@dataclass(frozen=True)
class ProgressReport:
    """What a job has to store since its last report: the newest progress and new log lines."""

    progress: tuple[int, int] | None = None
    progress_at: datetime | None = None
    lines: tuple[str, ...] = ()
    device: str | None = None


def store_report(
    session: Session, held: RunClaim, news: ProgressReport, *, now: datetime, lease_seconds: int
) -> Verdict:
    """Store progress and log lines, extend the lease, and say whether to go on.

    ``"stop"``: an organizer asked to cancel the run; ``"lost"``: the claim is no longer this
    worker's (its lease expired and the run was resumed, or it was finished elsewhere).
    """
    run = session.execute(select(BaselineRun).where(_held(held)).with_for_update()).scalar_one_or_none()
    if run is None:
        return "lost"
    for column, value in lease.renewal(now, lease_seconds).items():
        setattr(run, column, value)
    if news.progress is not None:
        run.done, run.total = news.progress
        run.progress_at = news.progress_at or now
    if news.lines:
        run.log_tail = trim_log(run.log_tail, news.lines)
    if news.device is not None:
        run.device = news.device[:32]
    session.flush()
    return "stop" if run.cancel_requested else "go"


# -- outcomes --------------------------------------------------------------------------------------


def check_output(session: Session, held: RunClaim, output: bytes, *, limits: Limits, gold_cache: GoldCache) -> None:
    """Validate the output against the phase's gold as an upload is; raise ``OutputRefused`` if it fails."""
    try:
        gold = parsed_gold(session, held.gold, gold_cache)
    except ScorerError as exc:
        raise OutputRefused(f"the phase's gold cannot be used by its scorer: {exc}") from None
    try:
        validate(gold, output, limits)
    except ValidationError as exc:
        raise OutputRefused(
            f"the baseline's output was refused by the scorer {held.gold.scorer}.\n{exc.summary()}"
        ) from None


def _file_name(held: RunClaim, output: bytes) -> str:
    # The seed systems write one JSON document (one line) or JSON lines; the name only labels the
    # file in downloads and archives, the scorer reads the bytes whatever it is called.
    extension = ".json" if b"\n" not in output.strip() else ".jsonl"
    return f"baseline-{held.baseline}-{held.version}{extension}"[:MAX_FILE_NAME]


def _description(held: RunClaim) -> str:
    try:
        text = baseline_class(held.baseline).description
    except UnknownBaseline:  # removed from the registry while it ran
        text = ""
    settings = ", ".join(f"{name}={value!r}" for name, value in sorted(held.options.items()))
    return f"{text}\n\nOptions: {settings}".strip() if settings else text


def record_success(session: Session, held: RunClaim, output: bytes, *, now: datetime) -> int | None:
    """Store the checked output as the competition's baseline submission, queue its scoring and mark
    the run ``succeeded``; returns the submission's id, or ``None`` if the claim was lost."""
    run = session.execute(select(BaselineRun).where(_held(held)).with_for_update()).scalar_one_or_none()
    if run is None:
        return None
    digest = sha256_hex(output)
    blob = put_blob(session, output, digest)
    submission = Submission(
        phase_id=held.phase_id,
        team_id=None,
        user_id=held.requested_by,
        blob_id=blob.id,
        sha256=digest,
        size=len(output),
        original_name=_file_name(held, output),
        method_name=title_of(held.baseline)[:200],
        method_description=_description(held),
        status=SubmissionStatus.QUEUED,
        created_at=now,
        is_baseline=True,
        baseline_name=held.baseline,
        baseline_version=held.version,
    )
    session.add(submission)
    session.flush()
    run.status = RunStatus.SUCCEEDED
    run.finished_at = now
    run.lease_expires_at = None
    run.submission_id = submission.id
    units = f"{run.done} of {run.total} units done, " if run.total else ""
    done = f": {units}wrote {len(output)} bytes; submission {submission.id} queued for scoring"
    run.log_tail = closed_log(session, held.run_id, now, "finished", done)
    session.flush()
    enqueue_after_commit(session, SCORE_SUBMISSION, submission.id)
    return submission.id


def record_failure(session: Session, held: RunClaim, *, now: datetime, error: str) -> bool:
    """Mark the run ``failed`` with ``error`` (shown to organizers only); ``False`` if the claim was lost."""
    closing = closed_log(session, held.run_id, now, "failed", f": {_first_line(error)}")
    return lease.finish(
        session,
        BaselineRun,
        held.run_id,
        held.attempt,
        RunStatus.FAILED,
        now=now,
        error=error[:ERROR_CHARS],
        log_tail=closing,
    )


def record_cancelled(session: Session, held: RunClaim, *, now: datetime) -> bool:
    """Mark a run that stopped on request ``cancelled``; ``False`` if the claim was lost."""
    closing = closed_log(session, held.run_id, now, "cancelled", ", as an organizer asked; no submission written")
    return lease.finish(
        session,
        BaselineRun,
        held.run_id,
        held.attempt,
        RunStatus.CANCELLED,
        now=now,
        error="",
        log_tail=closing,
    )


def give_up(session: Session, run_id: int, *, now: datetime, error: str) -> bool:
    """Fail a run that could not even be claimed (the database kept failing); only a ``queued`` one."""
    closing = closed_log(session, run_id, now, "failed before it started", f": {_first_line(error)}")
    return lease.give_up(
        session,
        BaselineRun,
        run_id,
        RunStatus.FAILED,
        now=now,
        error=error[:ERROR_CHARS],
        log_tail=closing,
    )


# -- the log's closing line: every run's log ends by saying how the run ended -----------------------


def closed_log(session: Session, run_id: int, now: datetime, outcome: str, detail: str) -> str:
    """The run's stored log with its closing line after the system's lines: the time (``HH:MM:SS``, as
    every line), the outcome, how long the attempt took, and ``detail``."""
    found = session.execute(
        select(BaselineRun.log_tail, BaselineRun.started_at).where(BaselineRun.id == run_id)
    ).first()
    existing, started = found if found is not None else ("", None)
    took = "" if started is None else f" in {max((now - started).total_seconds(), 0.0):.1f} s"
    return trim_log(existing or "", [f"{now:%H:%M:%S} {outcome}{took}{detail}"])


def _first_line(error: str) -> str:
    return next((line for line in error.splitlines() if line.strip()), "no reason given")
