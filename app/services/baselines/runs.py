"""Hosted baseline runs as organizers see them: the registry, starting, listing, following and cancelling.

A run belongs to one phase. Only the competition's organizers (and site admins) may start one or
see one: its log and error may quote the task's data, so everyone else is answered "forbidden" for
a phase's runs and "not found" for a run by id (ids reveal nothing). What participants do see is
the run's outcome: a submission flagged as a baseline, scored and ranked like any other.

The worker's side of a run (claim, progress, outcome) is in ``app.services.baselines.execution``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from app.services.accounts.access import is_organizer, require_organizer, require_user
from app.services.errors import Conflict, InvalidInput, NotFound
from app.services.jobs.enqueue import enqueue_after_commit
from app.storage.models import BaselineRun, Competition, Phase, Task, User
from app.storage.types import utcnow
from baselines import BadOptions, Baseline, UnknownBaseline, all_baselines, baseline_class, baselines_for

#: The job's name; the worker maps it to its function and routes it to the ``gpu`` queue.
RUN_BASELINE = "run_baseline"
#: How many runs of a phase a listing shows (newest first).
LIST_LIMIT = 100
ACTIVE = ("queued", "running")


def registry(scorer: str | None = None) -> list[dict[str, Any]]:
    """Every registered baseline system as plain data (those serving ``scorer`` when given), by name."""
    systems = all_baselines() if scorer is None else baselines_for(scorer)
    return [cls.describe() for cls in systems]


def claimable(now: datetime) -> Any:
    """Runs a worker may take: queued, or running with a lease that expired (its worker died)."""
    return or_(
        BaselineRun.status == "queued",
        (BaselineRun.status == "running") & (BaselineRun.lease_expires_at < now),
    )


def waiting_runs(session: Session, now: datetime) -> list[int]:
    """Runs a ``run_baseline`` job should be (re)started for, oldest first (the sweeper's list)."""
    query = select(BaselineRun.id).where(claimable(now)).order_by(BaselineRun.created_at, BaselineRun.id)
    return list(session.scalars(query))


# -- starting a run --------------------------------------------------------------------------------


def _system_for(task: Task, name: str) -> type[Baseline]:
    try:
        cls = baseline_class(name)
    except UnknownBaseline as exc:
        raise InvalidInput(
            "no such baseline", [{"where": "baseline", "message": str(exc)}], code="unknown_baseline"
        ) from None
    if task.scorer not in cls.scorers:
        fitting = ", ".join(c.name for c in baselines_for(task.scorer)) or "none"
        message = (
            f"baseline {name} writes submissions for {', '.join(cls.scorers)}, not for this task's scorer "
            f"{task.scorer}; baselines for it: {fitting}"
        )
        raise InvalidInput("the baseline does not fit this task", [{"where": "baseline", "message": message}])
    return cls


def _resolved_options(cls: type[Baseline], options: Mapping[str, Any]) -> dict[str, Any]:
    try:
        return cls.resolve_options(options)
    except BadOptions as exc:
        raise InvalidInput(
            "the baseline's options were refused", [{"where": "options", "message": str(exc)}], code="invalid_options"
        ) from None


def start_run(
    session: Session,
    user: User | None,
    phase: Phase,
    baseline: str,
    options: Mapping[str, Any] | None = None,
    *,
    now: datetime | None = None,
) -> BaselineRun:
    """Queue a run of ``baseline`` on ``phase`` (organizers); the job is sent after the commit.

    The system must write the task scorer's format, and its options are checked and stored with
    their defaults filled in, so the run records exactly what ran. A second run of the same system
    while one is queued or running on the phase is refused (a double click would run it twice).
    """
    task = phase.task
    organizer = require_organizer(session, user, task.competition)
    cls = _system_for(task, baseline)
    resolved = _resolved_options(cls, options or {})
    busy = session.scalar(
        select(BaselineRun.id).where(
            BaselineRun.phase_id == phase.id, BaselineRun.baseline == cls.name, BaselineRun.status.in_(ACTIVE)
        )
    )
    if busy is not None:
        raise Conflict(
            f"baseline {cls.name} is already queued or running on this phase (run {busy}); "
            "wait for it to finish or cancel it first",
            code="run_in_progress",
        )
    now = now or utcnow()
    run = BaselineRun(
        phase_id=phase.id,
        requested_by=organizer.id,
        baseline=cls.name,
        baseline_version=cls.version,
        options=resolved,
        status="queued",
        created_at=now,
    )
    session.add(run)
    session.flush()
    enqueue_after_commit(session, RUN_BASELINE, run.id)
    return run


# -- finding and cancelling runs -------------------------------------------------------------------


def list_runs(session: Session, user: User | None, phase: Phase) -> list[BaselineRun]:
    """The phase's runs, newest first (organizers)."""
    require_organizer(session, user, phase.task.competition)
    query = select(BaselineRun).where(BaselineRun.phase_id == phase.id)
    return list(session.scalars(query.order_by(BaselineRun.created_at.desc(), BaselineRun.id.desc()).limit(LIST_LIMIT)))


def get_run(session: Session, user: User | None, run_id: int) -> BaselineRun:
    """A run its viewer organizes; the same "not found" for a missing run and for anyone else's."""
    user = require_user(user)
    run = session.get(BaselineRun, run_id)
    if run is None or not is_organizer(session, user, _competition_id(session, run)):
        raise NotFound(f"there is no baseline run {run_id} that you may see")
    return run


def _competition_id(session: Session, run: BaselineRun) -> int:
    query = select(Task.competition_id).join(Phase, Phase.task_id == Task.id).where(Phase.id == run.phase_id)
    found = session.scalar(query)
    assert found is not None  # the foreign keys guarantee it
    return found


def request_cancel(session: Session, user: User | None, run_id: int, *, now: datetime | None = None) -> BaselineRun:
    """Stop a run: one that no worker holds ends at once; a running one stops at its next check.

    Both steps are compare-and-set on the status, so a worker claiming the run at the same moment
    either finds it cancelled or is asked to stop.
    """
    run = get_run(session, user, run_id)
    if run.status not in ACTIVE:
        raise Conflict(f"baseline run {run_id} is {run.status}; only a queued or running run can be cancelled")
    now = now or utcnow()
    session.execute(
        update(BaselineRun)
        .where(BaselineRun.id == run_id, BaselineRun.status.in_(ACTIVE))
        .values(cancel_requested=True)
        .execution_options(synchronize_session=False)
    )
    session.execute(
        update(BaselineRun)
        .where(BaselineRun.id == run_id, claimable(now))
        .values(status="cancelled", finished_at=now, lease_expires_at=None)
        .execution_options(synchronize_session=False)
    )
    session.refresh(run)
    return run


# -- what organizers see ---------------------------------------------------------------------------


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "done": self.done,
            "total": self.total,
            "fraction": self.fraction,
            "rate": self.rate,
            "eta_seconds": self.eta_seconds,
            "updated_at": self.updated_at,
        }


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


def describe_run(session: Session, run: BaselineRun) -> dict[str, Any]:
    """A run as the API and the organizer page show it (only organizers ever get one)."""
    return describe_runs(session, [run])[0]


def describe_runs(session: Session, runs: list[BaselineRun]) -> list[dict[str, Any]]:
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


def _describe(run: BaselineRun, ref: tuple[str, str, str], requested_by: str | None) -> dict[str, Any]:
    progress = progress_of(run.done, run.total, run.started_at, run.progress_at, running=run.status == "running")
    return {
        "id": run.id,
        "competition": ref[0],
        "task": ref[1],
        "phase": ref[2],
        "baseline": run.baseline,
        "version": run.baseline_version,
        "title": title_of(run.baseline),
        "options": dict(run.options or {}),
        "status": run.status,
        "requested_by": requested_by,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "attempts": run.attempts,
        "worker": run.worker,
        "device": run.device,
        "progress": progress.to_dict(),
        "log_tail": run.log_tail,
        "error": run.error,
        "cancel_requested": run.cancel_requested,
        "submission_id": run.submission_id,
    }
