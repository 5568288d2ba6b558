"""The ``run_baseline`` job: run a hosted baseline system on a phase and make its output a submission.

The job claims the run (a lease, as a scoring job has), reads the task's training files and
resources and the phase's public files, and runs the system outside any transaction. The system's
callbacks only collect progress and log lines in memory; a monitor thread stores them at most once
per ``REPORT_SECONDS`` in a short transaction that also extends the lease and reads whether an
organizer asked the run to stop, so a slow database never slows the system and a cancel is seen
within about a second. The outcome is recorded by ``app.services.baselines.execution``.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING

from sqlalchemy.exc import OperationalError

from app.services.baselines import execution
from app.services.baselines.execution import ProgressReport, RunClaim, Verdict
from app.services.baselines.runs import RUN_BASELINE, waiting_runs
from app.storage.types import utcnow
from baselines import Baseline, BaselineError, Cancelled, get_baseline

if TYPE_CHECKING:
    from app.worker.jobs import JobContext

log = logging.getLogger(__name__)

#: How often a running system's progress and log are stored (and a cancel request is looked for).
REPORT_SECONDS = 1.0


class RunMonitor:
    """The three callbacks a system gets, and the thread that stores what they collect.

    Log lines are stored with the UTC time they were logged (``HH:MM:SS``)."""

    def __init__(self, ctx: JobContext, found: RunClaim, *, device: str | None = None) -> None:
        self.ctx = ctx
        self.found = found
        #: ``"stop"`` once an organizer asked to cancel, ``"lost"`` once the claim is someone else's.
        self.verdict: Verdict = "go"
        self._lock = threading.Lock()
        self._progress: tuple[int, int] | None = None
        self._progress_at: datetime | None = None
        self._lines: list[str] = []
        self._device = device
        self._stop = threading.Event()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"baseline-run-{found.run_id}", daemon=True)

    # -- the system's callbacks (called from the job's thread) ------------------------------------
    def progress(self, done: int, total: int) -> None:
        with self._lock:
            self._progress = (done, total)
            self._progress_at = utcnow()

    def log(self, line: str) -> None:
        with self._lock:
            self._lines.append(f"{utcnow():%H:%M:%S} {line}")

    def should_stop(self) -> bool:
        return self._stop.is_set()

    # -- storing ------------------------------------------------------------------------------------
    def __enter__(self) -> RunMonitor:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._closing.set()
        self._thread.join()
        self.flush()  # what the system reported after the last tick

    def _loop(self) -> None:
        while not self._closing.wait(REPORT_SECONDS):
            self.flush()

    def flush(self) -> None:
        """Store what was collected, extend the lease, and note whether to stop."""
        with self._lock:
            news = ProgressReport(self._progress, self._progress_at, tuple(self._lines), self._device)
            self._progress, self._lines, self._device = None, [], None
        try:
            with self.ctx.session() as session:
                verdict = execution.store_report(
                    session, self.found, news, now=utcnow(), lease_seconds=self.ctx.settings.lease_seconds
                )
                session.commit()
        except Exception:  # a missed report is not fatal: keep what it held for the next one
            log.warning("could not store the progress of baseline run %s", self.found.run_id, exc_info=True)
            with self._lock:
                self._lines[:0] = news.lines
                if self._progress is None and news.progress is not None:
                    self._progress, self._progress_at = news.progress, news.progress_at
                self._device = self._device or news.device
            return
        if verdict != "go":
            self.verdict = verdict
            self._stop.set()


def _device(system: Baseline) -> str:
    """Where the system computes: the GPU for a neural system when torch sees one, else the CPU."""
    if not system.wants_gpu:
        return "cpu"
    try:
        from baselines.encoders import torch_device

        return torch_device()
    except ImportError:  # the baselines extra is missing; the system will say so itself
        return "cpu"


def _error_text(exc: BaseException) -> str:
    lines = traceback.format_exception(exc)
    return f"{type(exc).__name__}: {exc}\n\n" + "".join(lines[-30:])


def _fail(ctx: JobContext, found: RunClaim, error: str) -> None:
    with ctx.session() as session:
        execution.record_failure(session, found, now=utcnow(), error=error)
        session.commit()


def run_baseline(ctx: JobContext, run_id: int) -> None:
    """Run one baseline; record a baseline submission queued for scoring, an error, or a cancellation."""
    with ctx.session() as session:
        found = execution.claim_run(
            session,
            run_id,
            worker=ctx.worker,
            now=utcnow(),
            lease_seconds=ctx.settings.lease_seconds,
            max_attempts=ctx.settings.max_attempts,
        )
        session.commit()
    if found is None:
        return
    try:
        system = get_baseline(found.baseline, found.options)
    except BaselineError as exc:  # removed from the registry, or its options changed meaning
        _fail(ctx, found, str(exc))
        return
    if system.version != found.version:  # a worker with another release than the one that took the run
        _fail(
            ctx,
            found,
            f"this worker has version {system.version} of baseline {system.name}, but the run was started for "
            f"version {found.version}; start a new run",
        )
        return
    monitor = RunMonitor(ctx, found, device=_device(system))
    try:
        with monitor:
            with ctx.session(read_only=True) as session:
                inputs = execution.load_inputs(session, found)
            monitor.log(
                f"{system.name} {system.version}: {len(inputs.training)} training file(s), "
                f"{len(inputs.inputs)} input file(s), {len(inputs.resources)} resource(s)"
            )
            output = system.run(inputs, monitor.progress, monitor.log, monitor.should_stop)
    except Cancelled:
        if monitor.verdict != "lost":
            with ctx.session() as session:
                execution.record_cancelled(session, found, now=utcnow())
                session.commit()
        return
    except OperationalError:
        # The database, not the system: leave the claim to expire, and the run is resumed.
        log.exception("database error during baseline run %s; it will be resumed", run_id)
        return
    except BaselineError as exc:  # the system refused the task's data: the message says where
        _fail(ctx, found, str(exc))
        return
    except Exception as exc:
        log.exception("baseline run %s failed", run_id)
        _fail(ctx, found, _error_text(exc))
        return
    try:
        with ctx.session(read_only=True) as session:
            execution.check_output(session, found, output, limits=ctx.limits, gold_cache=ctx.gold_cache)
    except execution.OutputRefused as exc:
        _fail(ctx, found, str(exc))
        return
    with ctx.session() as session:
        execution.record_success(session, found, output, now=utcnow())
        session.commit()


def resume_runs(ctx: JobContext, enqueue: Callable[[str, int], None]) -> list[int]:
    """Send every run that waits (queued, or interrupted: running with an expired lease) to ``enqueue``."""
    with ctx.session(read_only=True) as session:
        ids = waiting_runs(session, utcnow())
    for run_id in ids:
        enqueue(RUN_BASELINE, run_id)
    return ids
