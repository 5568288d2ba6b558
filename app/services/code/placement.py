"""Where a code run may run: what a worker offers (its GPUs, a sandbox that works), runs that wait for a
worker that can run them, and one GPU per run.

A worker's offer (``Here``) is its GPUs (``sandbox.gpus.detect`` of ``PODIUM_GPU_DEVICES``, once per process)
and whether its sandbox can run a program (``sandbox.check_available``, asked at every claim, so that a
sandbox the operator repaired is seen by the next run). ``waiting_for`` says why a run cannot run here: no
usable sandbox ("a worker that can run code: <why>"), or a phase whose programs need a GPU (``gpu: true``
without ``gpu_fallback_cpu``) on a worker without one ("a GPU worker: ...").

Such a run is never failed and never charged again: the claim (``claiming``, the kind's claim step) does not
take it, so the fair claim goes on to the next waiting run this worker can run; the run its message named is
left waiting (``wait``): queued, the reason in ``CodeRun.waiting_for`` for its pages, and its send stamps
cleared (its message is spent), so that the sweeper (``app.worker.sweeper``, the one way jobs are resumed) sends
it again at its next sweep: in the distributed mode to whichever worker of the ``gpu`` queue takes it
first, until one that can run it does; in the embedded mode to the same pool, until the operator repaired
the sandbox (or the server, restarted with a GPU, takes every waiting run at once). The submission stays
``awaiting_run`` throughout, counted once against its team. A runtime the sandbox's user cannot read is found
by the claim too (the run's runtime checked as ``sandbox.run`` checks it), so such a run is never taken and its
page says at every moment what it waits for. The same holds for a sandbox found unusable only while the run
starts (``SandboxUnavailable``: a cgroup that cannot be made): ``run_here`` puts the taken run back
(``release``: its attempt not counted) instead of failing it.

A GPU run on a worker with GPUs holds one (``sandbox.gpus.hold``: one run per GPU of the machine, waiting,
lease renewed, while every one is taken) and sees its device nodes and ``CUDA_VISIBLE_DEVICES``; a phase that
allows the CPU runs on it where the worker has none, and the run says which it had (``CodeRun.device``).
"""

from __future__ import annotations

import functools
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.config import Settings
from app.services.code import execution
from app.services.code.execution import CodeClaim
from app.services.code.sandboxed import CodeOutcome, Isolation, run_code
from app.services.code.settings import CodeSettings
from app.services.jobs import lease
from app.services.jobs.kinds import JobContext
from app.services.jobs.retry import GaveUp, with_retries
from app.storage.models import CodeRun, Phase, RunStatus, Submission
from app.storage.types import utcnow
from codalab.archives import Zip
from sandbox import RuntimeProblem, SandboxUnavailable, check_available, choose_runtime
from sandbox.gpus import Gpu, GpuProblem, detect, hold
from sandbox.runtimes import check_readable

log = logging.getLogger(__name__)

#: What a waiting run waits for, as its team reads it (organizers read the reason after the colon too).
CODE_WORKER = "a worker that can run code"
GPU_WORKER = "a GPU worker"
#: The longest reason kept on the row.
REASON_CHARS = 2000


@dataclass(frozen=True)
class Here:
    """What this worker offers a run: its GPUs, why it has none the operator named (a missing device), and why
    its sandbox cannot run programs (None: it can)."""

    gpus: tuple[Gpu, ...] = ()
    gpu_problem: str | None = None
    sandbox_problem: str | None = None


@functools.lru_cache(maxsize=8)
def _gpus(setting: str) -> tuple[tuple[Gpu, ...], str | None]:
    try:
        return detect(setting), None
    except GpuProblem as exc:
        log.warning("this worker gives code runs no GPU: %s", exc)
        return (), str(exc)


def offered(settings: Settings) -> Here:
    """This worker's offer now (the sandbox checked again, the GPUs as found when the process first looked)."""
    gpus, gpu_problem = _gpus(settings.gpu_devices)
    problem = None
    if settings.program_sandbox == "bwrap":
        try:
            check_available(require_cgroup=not settings.sandbox_allow_no_cgroup)
        except SandboxUnavailable as exc:
            problem = str(exc)
    return Here(gpus, gpu_problem, problem)


def waiting_for(code: CodeSettings, here: Here) -> str | None:
    """Why a run of a phase with ``code`` cannot run on a worker offering ``here`` ("<whom it waits for>: <why>"),
    or None where it can."""
    if here.sandbox_problem:
        return f"{CODE_WORKER}: {here.sandbox_problem}"
    if code.gpu and not code.gpu_fallback_cpu and not here.gpus:
        why = here.gpu_problem or "this phase's programs need a GPU, and the worker that took it has none"
        return f"{GPU_WORKER}: {why}"
    return None


def release(session: Session, held: CodeClaim, reason: str, *, now: datetime) -> bool:
    """Put a claimed run back: queued, its attempt not counted, ``reason`` kept for its pages, and no message out
    for it (the sweeper sends one); ``False`` if the attempt no longer holds it."""
    released = lease.put_back(session, CodeRun, held.run_id, held.attempt, waiting_for=reason[:REASON_CHARS])
    if released:
        log.info("code run %s waits for %s (at %s)", held.run_id, reason, now.isoformat())
    return released


def wait(session: Session, run_id: int, reason: str, *, now: datetime) -> bool:
    """Leave a waiting run (queued, or running with an expired lease) untaken: queued, ``reason`` kept for its
    pages, and no message out for it (the sweeper sends one); ``False`` if a worker holds it."""
    result = session.execute(
        update(CodeRun)
        .where(CodeRun.id == run_id, lease.claimable(CodeRun, now))
        .values(
            status=RunStatus.QUEUED,
            lease_expires_at=None,
            heartbeat_at=None,
            enqueued_at=None,
            sent_at=None,
            waiting_for=reason[:REASON_CHARS],
        )
        .execution_options(synchronize_session=False)
    )
    return getattr(result, "rowcount", 0) == 1


def _runtime_problem(settings: Settings, code: CodeSettings) -> str | None:
    """Why the sandbox's user cannot read the runtime a run of ``code`` would get here (None: it can, or there is
    no sandbox, or the runtime is missing, which fails the run as before). Asked before taking the run, as
    ``run`` asks before starting it: a worker that took such a run would put it back at every sweep, and while
    it held it the run's page said nothing of what it waits for."""
    if settings.program_sandbox != "bwrap":
        return None
    try:
        runtime, _ = choose_runtime(code.runtime, settings.runtime_table)
    except RuntimeProblem:
        return None
    try:
        check_readable(runtime, others=os.geteuid() == 0)
    except RuntimeProblem as exc:
        return str(exc)
    return None


def _reason(session: Session, run_id: int, settings: Settings, here: Here) -> str | None:
    if here.sandbox_problem:
        return f"{CODE_WORKER}: {here.sandbox_problem}"
    phase_code = session.scalar(
        select(Phase.code)
        .join(Submission, Submission.phase_id == Phase.id)
        .join(CodeRun, CodeRun.submission_id == Submission.id)
        .where(CodeRun.id == run_id)
    )
    if phase_code is None:
        return None
    code = CodeSettings.of(phase_code)
    if (problem := _runtime_problem(settings, code)) is not None:
        return f"{CODE_WORKER}: {problem}"
    return waiting_for(code, here)


def claiming(settings: Settings, named: int) -> Callable[..., CodeClaim | None]:
    """The claim step of ``run_code`` for the message naming ``named``, on this worker: a run it cannot run is
    not taken (``None``: the fair claim goes on to the next run; the named run itself is left waiting, with its
    reason and no message, ``wait``), any other is ``execution.claim``'s."""
    here = offered(settings)
    judged: dict[int, str | None] = {}  # run id: why it cannot run here, for the rounds of one claim

    def claim(
        session: Session, run_id: int, /, *, worker: str, now: datetime, lease_seconds: int, max_attempts: int
    ) -> CodeClaim | None:
        if run_id not in judged:
            judged[run_id] = _reason(session, run_id, settings, here)
            reason = judged[run_id]
            if reason is not None and run_id == named and wait(session, run_id, reason, now=now):
                log.info("code run %s waits for %s", run_id, reason)
        if judged[run_id] is not None:
            return None
        return execution.claim(
            session, run_id, worker=worker, now=now, lease_seconds=lease_seconds, max_attempts=max_attempts
        )

    return claim


def lock_dir(settings: Settings) -> Path:
    return settings.gpu_lock_dir or Path(tempfile.gettempdir())


def run_here(ctx: JobContext, held: CodeClaim, program: Zip, inputs: Zip, where: Isolation) -> CodeOutcome:
    """Run the program with a GPU where its phase asks for one and this worker has one; a sandbox found unusable
    puts the run back to wait (``CodeOutcome.released``) instead of failing it."""
    gpus = _gpus(ctx.settings.gpu_devices)[0] if held.code.gpu else ()
    try:
        if not gpus:
            return run_code(program, inputs, held.code, where)
        with hold(gpus, lock_dir(ctx.settings)) as gpu:
            placed = replace(where, devices=gpu.nodes(), env=tuple(gpu.env().items()))
            return replace(run_code(program, inputs, held.code, placed), device=gpu.describe())
    except SandboxUnavailable as exc:
        reason = f"{CODE_WORKER}: {exc}"
        try:
            with_retries(
                ctx.settings,
                f"putting code run {held.run_id} back",
                lambda: ctx.write(lambda s: release(s, held, reason, now=utcnow())),
            )
        except GaveUp:  # the lease expires and the sweeper sends the run again
            log.exception("could not put code run %s back to wait", held.run_id)
        return CodeOutcome(None, released=reason)
