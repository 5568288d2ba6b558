"""The steps of a baseline job, each in the caller's transaction (the job is ``app.worker.baseline_job``).

The job ``claim_run``s the run (a compare-and-set, with a lease), reads its ``load_inputs``, runs
the system outside any transaction while ``store_report`` stores its progress and log every second or so
(extending the lease and answering whether to stop), then records one outcome:

* ``check_output`` validates the output against the phase's gold exactly as an upload is validated,
  and ``record_success`` stores it as a submission of the competition (no team, no quota) flagged
  as a baseline, queued for the ordinary scoring job;
* ``record_failure`` keeps the error for the organizers; ``record_cancelled`` ends a stopped run.

Every write after the claim is guarded by the claim's attempt number, so a worker whose lease
expired and whose run was resumed elsewhere changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.services.baselines.runs import claimable, title_of
from app.services.jobs.enqueue import SCORE_SUBMISSION, enqueue_after_commit
from app.services.scoring.gold import GoldCache, gold_key
from app.services.submissions.limits import MAX_FILE_NAME, Limits
from app.storage.blobs import put_blob, read_blob, sha256_hex
from app.storage.models import BaselineRun, Blob, Phase, PhaseFile, Submission, Task, TaskFile
from baselines import BaselineInputs, UnknownBaseline, baseline_class
from scorers import ScorerError, ValidationError, unpack_submission

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
    scorer: str
    scorer_options: dict[str, Any]
    gold_blob_id: int
    gold_sha256: str
    requested_by: int | None


def _mine(found: RunClaim) -> Any:
    return (
        (BaselineRun.id == found.run_id) & (BaselineRun.status == "running") & (BaselineRun.attempts == found.attempt)
    )


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
        .where(BaselineRun.id == run_id, claimable(now), BaselineRun.cancel_requested.is_(True))
        .values(status="cancelled", finished_at=now, lease_expires_at=None)
        .execution_options(synchronize_session=False)
    )
    result = session.execute(
        update(BaselineRun)
        .where(BaselineRun.id == run_id, claimable(now), BaselineRun.cancel_requested.is_(False))
        .values(
            status="running",
            attempts=BaselineRun.attempts + 1,
            started_at=now,
            heartbeat_at=now,
            lease_expires_at=now + timedelta(seconds=lease_seconds),
            worker=worker[:200],
            done=0,
            total=None,
            progress_at=None,
        )
        .execution_options(synchronize_session=False)
    )
    if getattr(result, "rowcount", 0) != 1:
        return None
    run = session.get(BaselineRun, run_id, populate_existing=True)
    assert run is not None
    phase = session.execute(
        select(Phase.gold_blob_id, Blob.sha256, Task.scorer, Task.scorer_options)
        .join(Task, Task.id == Phase.task_id)
        .join(Blob, Blob.id == Phase.gold_blob_id)
        .where(Phase.id == run.phase_id)
    ).one()
    found = RunClaim(
        run_id=run.id,
        attempt=run.attempts,
        phase_id=run.phase_id,
        baseline=run.baseline,
        version=run.baseline_version,
        options=dict(run.options or {}),
        scorer=phase.scorer,
        scorer_options=dict(phase.scorer_options or {}),
        gold_blob_id=phase.gold_blob_id,
        gold_sha256=phase.sha256,
        requested_by=run.requested_by,
    )
    if found.attempt > max_attempts:
        record_failure(
            session, found, now=now, error=f"the run was interrupted {max_attempts} times (worker crash); gave up"
        )
        return None
    run.log_tail = trim_log(run.log_tail, [f"{now:%H:%M:%S} attempt {found.attempt} started on {worker}"])
    session.flush()
    return found


def load_inputs(session: Session, found: RunClaim) -> BaselineInputs:
    """The task's training files and resources and the phase's public files, by name."""
    task_id = select(Phase.task_id).where(Phase.id == found.phase_id).scalar_subquery()
    task_files = session.execute(
        select(TaskFile.kind, TaskFile.name, Blob.data)
        .join(Blob, Blob.id == TaskFile.blob_id)
        .where(TaskFile.task_id == task_id)
        .order_by(TaskFile.position, TaskFile.id)
    ).all()
    phase_files = session.execute(
        select(PhaseFile.name, Blob.data)
        .join(Blob, Blob.id == PhaseFile.blob_id)
        .where(PhaseFile.phase_id == found.phase_id)
        .order_by(PhaseFile.position, PhaseFile.id)
    ).all()
    return BaselineInputs(
        scorer=found.scorer,
        training={row.name: bytes(row.data) for row in task_files if row.kind == "training"},
        inputs={row.name: bytes(row.data) for row in phase_files},
        resources={row.name: bytes(row.data) for row in task_files if row.kind == "resource"},
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
    session: Session, found: RunClaim, news: ProgressReport, *, now: datetime, lease_seconds: int
) -> Verdict:
    """Store progress and log lines, extend the lease, and say whether to go on.

    ``"stop"``: an organizer asked to cancel the run; ``"lost"``: the claim is no longer this
    worker's (its lease expired and the run was resumed, or it was finished elsewhere).
    """
    run = session.execute(select(BaselineRun).where(_mine(found)).with_for_update()).scalar_one_or_none()
    if run is None:
        return "lost"
    run.heartbeat_at = now
    run.lease_expires_at = now + timedelta(seconds=lease_seconds)
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


def check_output(session: Session, found: RunClaim, output: bytes, *, limits: Limits, gold_cache: GoldCache) -> None:
    """Validate the output against the phase's gold as an upload is; raise ``OutputRefused`` if it fails."""
    key = gold_key(found.phase_id, found.gold_sha256, found.scorer, found.scorer_options)
    try:
        parsed = gold_cache.get(key, lambda: read_blob(session, found.gold_blob_id))
    except ScorerError as exc:
        raise OutputRefused(f"the phase's gold cannot be used by its scorer: {exc}") from None
    try:
        content, _ = unpack_submission(output, max_bytes=limits.max_unzipped_bytes, max_entries=limits.max_zip_entries)
        parsed.scorer.parse_submission(content, parsed.gold)
    except ValidationError as exc:
        raise OutputRefused(
            f"the baseline's output was refused by the scorer {found.scorer}.\n{exc.summary()}"
        ) from None


def _file_name(found: RunClaim, output: bytes) -> str:
    # The seed systems write one JSON document (one line) or JSON lines; the name only labels the
    # file in downloads and archives, the scorer reads the bytes whatever it is called.
    extension = ".json" if b"\n" not in output.strip() else ".jsonl"
    return f"baseline-{found.baseline}-{found.version}{extension}"[:MAX_FILE_NAME]


def _description(found: RunClaim) -> str:
    try:
        text = baseline_class(found.baseline).description
    except UnknownBaseline:  # removed from the registry while it ran
        text = ""
    settings = ", ".join(f"{name}={value!r}" for name, value in sorted(found.options.items()))
    return f"{text}\n\nOptions: {settings}".strip() if settings else text


def record_success(session: Session, found: RunClaim, output: bytes, *, now: datetime) -> int | None:
    """Store the checked output as the competition's baseline submission, queue its scoring and mark
    the run ``succeeded``; returns the submission's id, or ``None`` if the claim was lost."""
    run = session.execute(select(BaselineRun).where(_mine(found)).with_for_update()).scalar_one_or_none()
    if run is None:
        return None
    digest = sha256_hex(output)
    blob = put_blob(session, output, digest)
    submission = Submission(
        phase_id=found.phase_id,
        team_id=None,
        user_id=found.requested_by,
        blob_id=blob.id,
        sha256=digest,
        size=len(output),
        original_name=_file_name(found, output),
        method_name=title_of(found.baseline)[:200],
        method_description=_description(found),
        status="queued",
        created_at=now,
        is_baseline=True,
        baseline_name=found.baseline,
        baseline_version=found.version,
    )
    session.add(submission)
    session.flush()
    run.status = "succeeded"
    run.finished_at = now
    run.lease_expires_at = None
    run.submission_id = submission.id
    session.flush()
    enqueue_after_commit(session, SCORE_SUBMISSION, submission.id)
    return submission.id


def _finish(session: Session, found: RunClaim, now: datetime, status: str, error: str = "") -> bool:
    result = session.execute(
        update(BaselineRun)
        .where(_mine(found))
        .values(status=status, error=error, finished_at=now, lease_expires_at=None)
        .execution_options(synchronize_session=False)
    )
    return getattr(result, "rowcount", 0) == 1


def record_failure(session: Session, found: RunClaim, *, now: datetime, error: str) -> bool:
    """Mark the run ``failed`` with ``error`` (shown to organizers only); ``False`` if the claim was lost."""
    return _finish(session, found, now, "failed", error[:ERROR_CHARS])


def record_cancelled(session: Session, found: RunClaim, *, now: datetime) -> bool:
    """Mark a run that stopped on request ``cancelled``; ``False`` if the claim was lost."""
    return _finish(session, found, now, "cancelled")
