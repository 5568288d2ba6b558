"""The ``run_code`` job: run a submission's program on its phase's hidden inputs, on the ``gpu`` queue.

The job claims the run (a lease, renewed by a heartbeat thread while the program runs), fetches the program
and the inputs to local files (streamed: a model of hundreds of MB never sits in memory), and runs the program
in the sandbox outside any transaction (``app.services.code.sandboxed``). Its predictions are checked against
the phase's public view as an upload is: predictions the scorer refuses are the program's fault, like a crash,
a limit or no output. Then ``execution`` stores the outcome; predictions that pass are queued for the ordinary
scoring job. A platform failure (no sandbox on this worker, a runtime that is missing, stored inputs that cannot
be unpacked) fails the run refunded; a worker that dies leaves the lease to expire, and the sweeper sends the job
again (``max_attempts`` in all).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial

from sqlalchemy.orm import Session

from app.config import Settings
from app.services.code import execution, placement
from app.services.code.execution import CodeClaim
from app.services.code.sandboxed import CodeOutcome, Isolation
from app.services.jobs.claiming import claim_next, failing
from app.services.jobs.heartbeat import heartbeats
from app.services.jobs.kinds import GPU, JobContext, JobKind
from app.services.scoring.gold import parsed_gold
from app.services.scoring.validation import validate
from app.storage.models import CodeRun
from app.storage.types import utcnow
from codalab.archives import ArchiveProblem
from sandbox import RuntimeProblem, SandboxUnavailable, choose_runtime
from sandbox.cleanup import run_folder
from scorers import ScorerError, ValidationError

log = logging.getLogger(__name__)


def isolation(settings: Settings, held: CodeClaim) -> Isolation:
    runtime, _ = choose_runtime(held.code.runtime, settings.runtime_table)
    return Isolation(
        runtime=runtime,
        isolation=settings.program_sandbox,
        require_cgroup=not settings.sandbox_allow_no_cgroup,
    )


def run_code_job(ctx: JobContext, run_id: int) -> None:
    """Run the fairest waiting program (the message's own when nothing else waits); queue its predictions for
    scoring, or fail it (at the team's cost or refunded)."""
    retry = ctx.retrying(RUN_CODE)
    held = claim_next(
        ctx, RUN_CODE, run_id, placement.claiming(ctx.settings, run_id), what="code run", give_up=_give_up
    )
    if held is None:
        return
    run_id = held.run_id
    platform = partial(_platform, held=held)
    with (
        ExitStack() as stack,
        failing(ctx, RUN_CODE, run_id, platform, known=CANNOT_RUN, explain=_cannot_run) as attempt,
        heartbeats(
            ctx,
            lambda s, seconds: execution.heartbeat(s, held, now=utcnow(), lease_seconds=seconds),
            f"code run {held.run_id}",
        ),
    ):
        where = isolation(ctx.settings, held)
        folder = stack.enter_context(run_folder("podium-fetch-", where.scratch))
        program, inputs = retry(
            f"reading the program of code run {run_id}",
            lambda: ctx.read(lambda s: execution.fetch(s, held, folder)),
        )
        outcome = placement.run_here(ctx, held, program, inputs, where)
        if outcome.predictions is not None:
            outcome = retry(
                f"checking the predictions of code run {run_id}",
                lambda: ctx.read(lambda s: _checked(ctx, s, held, outcome)),
            )
    if attempt.failed or outcome.released:
        return
    record: Callable[[Session], bool] = (
        (lambda s: execution.record_success(s, held, outcome, now=utcnow()))
        if outcome.predictions is not None
        else (lambda s: execution.record_program_failure(s, held, outcome, now=utcnow()))
    )
    with failing(ctx, RUN_CODE, run_id, platform):
        retry(f"storing code run {run_id}", lambda: ctx.write(record))


#: Errors that say this worker cannot run the program (the platform's failure, refunded).
CANNOT_RUN: tuple[type[Exception], ...] = (SandboxUnavailable, RuntimeProblem, ArchiveProblem, ScorerError)


def _cannot_run(exc: Exception) -> str:
    return f"the program could not be run on this worker: {exc}"


def _checked(ctx: JobContext, session: Session, held: CodeClaim, outcome: CodeOutcome) -> CodeOutcome:
    """The outcome, failed at the program's cost where the scorer refuses its predictions (against the public
    view, as an upload: nothing of the answers is in the refusal)."""
    assert outcome.predictions is not None
    gold = parsed_gold(session, held.gold, ctx.gold_cache)
    try:
        validate(gold, outcome.predictions, ctx.limits)
    except ValidationError as exc:
        return CodeOutcome(outcome.run, failure=f"Your program's predictions were refused. {exc.summary()}")
    return outcome


def _platform(session: Session, reason: str, *, held: CodeClaim) -> bool:
    return execution.record_platform_failure(session, held, reason, now=utcnow())


def _give_up(session: Session, run_id: int, reason: str) -> bool:
    return execution.give_up(session, run_id, now=utcnow(), reason=reason)


RUN_CODE = JobKind(name="run_code", queue=GPU, row=CodeRun, run=run_code_job)
