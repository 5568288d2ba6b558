"""Hosted baseline runs as organizers see them: the registry, starting, listing, following and cancelling.

A run belongs to one phase. Only the competition's organizers (and site admins) may start one or
see one: its log and error may quote the task's data, so everyone else is answered "forbidden" for
a phase's runs and "not found" for a run by id (ids reveal nothing). What participants do see is
the run's outcome: a submission flagged as a baseline, scored and ranked like any other.

How a run is shown is in ``app.services.baselines.views``; the job that runs it is
``app.services.baselines.job``, its steps (claim, progress, outcome) ``app.services.baselines.execution``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.services.accounts.access import is_organizer, require_organizer, require_user
from app.services.baselines.execution import closed_log
from app.services.baselines.job import RUN_BASELINE
from app.services.errors import Conflict, InvalidInput, NotFound
from app.services.jobs import lease
from app.services.jobs.enqueue import enqueue_after_commit
from app.storage.models import BaselineRun, Phase, RunStatus, Task, User
from app.storage.types import utcnow
from baselines import BadOptions, Baseline, UnknownBaseline, all_baselines, baseline_class, baselines_for

#: How many runs of a phase a listing shows (newest first).
LIST_LIMIT = 100
ACTIVE = tuple(status for status in RunStatus if status.active)


def registry(scorer: str | None = None, *, runs_here: bool = True) -> list[dict[str, Any]]:
    """Every registered baseline system as plain data (those serving ``scorer`` when given), by name, with
    whether this installation can run it. ``runs_here`` is false where other processes run the jobs (the
    distributed mode's workers, whose installation this one cannot see): ``available`` is then ``None``."""
    systems = all_baselines() if scorer is None else baselines_for(scorer)
    described = [cls.describe() for cls in systems]
    if not runs_here:
        for system in described:
            system.update(available=None, missing=[])
    return described


def _require_installed(cls: type[Baseline]) -> None:
    """Refuse a system whose modules this installation lacks, before a run is queued to fail."""
    missing = cls.missing()
    if missing:
        raise Conflict(
            f"baseline {cls.name} cannot run on this installation: it needs {', '.join(missing)}, "
            f"which are not installed; install them with {cls.install_hint()} and restart the server",
            code="baseline_unavailable",
        )


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
    runs_here: bool = True,
    now: datetime | None = None,
) -> BaselineRun:
    """Queue a run of ``baseline`` on ``phase`` (organizers); the job is sent after the commit.

    The system must write the task scorer's format, and its options are checked and stored with
    their defaults filled in, so the run records exactly what ran. A second run of the same system
    while one is queued or running on the phase is refused (a double click would run it twice), and so
    is a system that cannot run here (``runs_here``: this process runs the jobs) for want of its modules.
    """
    task = phase.task
    organizer = require_organizer(session, user, task.competition)
    cls = _system_for(task, baseline)
    if runs_here:
        _require_installed(cls)
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
        status=RunStatus.QUEUED,
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
    competition_id = session.scalar(query)
    assert competition_id is not None  # the foreign keys guarantee it
    return competition_id


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
        .where(BaselineRun.id == run_id, lease.claimable(BaselineRun, now))
        .values(
            status=RunStatus.CANCELLED,
            finished_at=now,
            lease_expires_at=None,
            log_tail=closed_log(session, run_id, now, "cancelled", ", as an organizer asked, while no worker ran it"),
        )
        .execution_options(synchronize_session=False)
    )
    session.refresh(run)
    return run
