"""The ``run_baseline`` job: run a hosted baseline system on a phase and make its output a submission.

The job claims the run (a lease, as a scoring job has), reads the task's training files and
resources and the phase's public files, and runs the system outside any transaction. The system's
callbacks only collect progress and log lines in memory; a monitor thread stores them at most once
per ``REPORT_SECONDS`` in a short transaction that also renews the lease and reads whether an
organizer asked the run to stop, so a slow database never slows the system and a cancel is seen
within about a second. Each database step is retried after transient errors, as a scoring job's
are; when one gives up the run is failed with the reason. The steps are in
``app.services.baselines.execution``.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from functools import partial
from types import TracebackType

from sqlalchemy.orm import Session

from app.services.baselines import execution
from app.services.baselines.execution import ProgressReport, RunClaim, Verdict
from app.services.jobs.claiming import claim_next, failing
from app.services.jobs.kinds import GPU, JobContext, JobKind
from app.storage.models import BaselineRun
from app.storage.types import utcnow
from baselines import Baseline, BaselineError, Cancelled, get_baseline

log = logging.getLogger(__name__)

#: How often a running system's progress and log are stored (and a cancel request is looked for).
REPORT_SECONDS = 1.0


class RunMonitor:
    """The three callbacks a system gets, and the thread that stores what they collect.

    Log lines are stored with the UTC time they were logged (``HH:MM:SS``)."""

    def __init__(self, ctx: JobContext, held: RunClaim, *, device: str | None = None) -> None:
        self.ctx = ctx
        self.held = held
        self.lease_seconds = ctx.settings.lease_seconds
        #: ``"stop"`` once an organizer asked to cancel, ``"lost"`` once the claim is someone else's.
        self.verdict: Verdict = "go"
        self._lock = threading.Lock()
        self._progress: tuple[int, int] | None = None
        self._progress_at: datetime | None = None
        self._lines: list[str] = []
        self._device = device
        self._stop = threading.Event()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"baseline-run-{held.run_id}", daemon=True)

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
            verdict = self.ctx.write(
                lambda s: execution.store_report(s, self.held, news, now=utcnow(), lease_seconds=self.lease_seconds)
            )
        except Exception:  # a missed report is not fatal: keep what it held for the next one
            log.warning("could not store the progress of baseline run %s", self.held.run_id, exc_info=True)
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


def run_baseline(ctx: JobContext, run_id: int) -> None:
    """Run the fairest waiting baseline (the message's own when nothing else waits); record a baseline
    submission queued for scoring, an error, or a cancellation."""
    retry = ctx.retrying(RUN_BASELINE)
    held = claim_next(ctx, RUN_BASELINE, run_id, execution.claim_run, what="baseline run", give_up=_give_up)
    if held is None:
        return
    run_id = held.run_id
    fail = partial(_record_failure, held=held)
    try:
        system = get_baseline(held.baseline, held.options)
    except BaselineError as exc:  # removed from the registry, or its options changed meaning
        _fail(ctx, held, str(exc))
        return
    if system.version != held.version:  # a worker with another release than the one that took the run
        _fail(
            ctx,
            held,
            f"this worker has version {system.version} of baseline {system.name}, but the run was started for "
            f"version {held.version}; start a new run",
        )
        return
    monitor = RunMonitor(ctx, held, device=_device(system))
    cancelled = False
    # BaselineError: the system refused the task's data, and its message says where.
    with failing(ctx, RUN_BASELINE, run_id, fail, known=(BaselineError,)) as attempt, monitor:
        inputs = retry(
            f"reading the inputs of baseline run {run_id}",
            lambda: ctx.read(lambda s: execution.load_inputs(s, held)),
        )
        monitor.log(
            f"{system.name} {system.version}: {len(inputs.training)} training file(s), "
            f"{len(inputs.inputs)} input file(s), {len(inputs.resources)} resource(s)"
        )
        try:
            output = system.run(inputs, monitor.progress, monitor.log, monitor.should_stop)
        except Cancelled:
            cancelled = True
    if cancelled:
        if monitor.verdict != "lost":
            ctx.record_failure(RUN_BASELINE, run_id, lambda s: execution.record_cancelled(s, held, now=utcnow()))
        return
    if attempt.failed:
        return
    with failing(ctx, RUN_BASELINE, run_id, fail, known=(execution.OutputRefused,)):
        retry(
            f"checking the output of baseline run {run_id}",
            lambda: ctx.read(
                lambda s: execution.check_output(s, held, output, limits=ctx.limits, gold_cache=ctx.gold_cache)
            ),
        )
        retry(
            f"storing the output of baseline run {run_id}",
            lambda: ctx.write(lambda s: execution.record_success(s, held, output, now=utcnow())),
        )


def _record_failure(session: Session, error: str, *, held: RunClaim) -> bool:
    return execution.record_failure(session, held, now=utcnow(), error=error)


def _fail(ctx: JobContext, held: RunClaim, error: str) -> None:
    ctx.record_failure(RUN_BASELINE, held.run_id, lambda s: _record_failure(s, error, held=held))


def _give_up(session: Session, run_id: int, reason: str) -> bool:
    return execution.give_up(session, run_id, now=utcnow(), error=reason)


RUN_BASELINE = JobKind(name="run_baseline", queue=GPU, row=BaselineRun, run=run_baseline)
