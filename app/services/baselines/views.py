"""Hosted baseline runs as organizers see them: progress (rate, time left) and each run as plain values."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.storage.models import BaselineRun, Competition, Phase, RunStatus, Task, User
from baselines import UnknownBaseline, baseline_class


@dataclass(frozen=True)
class Progress:
    """How far a run is: ``done`` of ``total`` units, the rate so far and, while it runs, the time left."""

    done: int
    total: int | None
    fraction: float | None
    #: Units per second between the start of the attempt and the last report.
    rate: float | None
    eta_seconds: float | None
    updated_at: datetime | None


@dataclass(frozen=True)
class RunRecord:
    """A run as organizers see it (the API's ``RunOut`` is shaped from it; only organizers get one)."""

    id: int
    competition: str
    task: str
    phase: str
    baseline: str
    version: str
    title: str
    options: dict[str, Any]
    status: RunStatus
    requested_by: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int
    worker: str | None
    device: str | None
    progress: Progress
    #: The last lines of the system's log.
    log_tail: str
    #: Why the run failed.
    error: str
    cancel_requested: bool
    #: The baseline submission a successful run produced.
    submission_id: int | None


def progress_of(
    done: int, total: int | None, started_at: datetime | None, progress_at: datetime | None, *, running: bool
) -> Progress:
    """The rate is the units done over the time they took (start of the attempt to the last report);
    the time left is the units left at that rate, counted from the last report."""
    fraction = min(done / total, 1.0) if total else None
    rate = None
    if done > 0 and started_at is not None and progress_at is not None:
        elapsed = (progress_at - started_at).total_seconds()
        rate = done / elapsed if elapsed > 0 else None
    eta = None
    if running and rate is not None and total is not None:
        eta = max(total - done, 0) / rate
    return Progress(done, total, fraction, rate, eta, progress_at)


def describe_run(session: Session, run: BaselineRun) -> RunRecord:
    """A run as the API and the organizer page show it (only organizers ever get one)."""
    return describe_runs(session, [run])[0]


def describe_runs(session: Session, runs: list[BaselineRun]) -> list[RunRecord]:
    phase_ids = {run.phase_id for run in runs}
    user_ids = {run.requested_by for run in runs if run.requested_by is not None}
    refs = {
        row.id: (row.competition, row.task, row.phase)
        for row in session.execute(
            select(Phase.id, Competition.slug.label("competition"), Task.slug.label("task"), Phase.slug.label("phase"))
            .join(Task, Task.id == Phase.task_id)
            .join(Competition, Competition.id == Task.competition_id)
            .where(Phase.id.in_(phase_ids))
        )
    }
    names = {row.id: row.name for row in session.execute(select(User.id, User.name).where(User.id.in_(user_ids)))}
    return [_describe(run, refs[run.phase_id], names.get(run.requested_by or 0)) for run in runs]


def title_of(name: str) -> str:
    """The system's title, or its name if it left the registry since it ran."""
    try:
        return baseline_class(name).title
    except UnknownBaseline:
        return name


def _describe(run: BaselineRun, ref: tuple[str, str, str], requested_by: str | None) -> RunRecord:
    progress = progress_of(
        run.done, run.total, run.started_at, run.progress_at, running=run.status == RunStatus.RUNNING
    )
    return RunRecord(
        id=run.id,
        competition=ref[0],
        task=ref[1],
        phase=ref[2],
        baseline=run.baseline,
        version=run.baseline_version,
        title=title_of(run.baseline),
        options=dict(run.options or {}),
        status=run.status,
        requested_by=requested_by,
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
        attempts=run.attempts,
        worker=run.worker,
        device=run.device,
        progress=progress,
        log_tail=run.log_tail,
        error=run.error,
        cancel_requested=run.cancel_requested,
        submission_id=run.submission_id,
    )
