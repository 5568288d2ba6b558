"""The ``score_submission`` job: score one submission's current round and store the result.

Claiming the submission and reading its file is one short transaction, storing the score another,
each retried after transient errors (``RetryPolicy``); the scorer runs outside any transaction, on
gold from the process's cache, while a heartbeat thread renews the lease (a scoring program, the
``program`` scorer, runs the same way: ``app.services.scoring.programs``). When a step
gives up, the submission is failed with the reason for the organizers and the quota given back.
A scorer that raises fails the submission the same way (the platform's fault: the file passed
validation at upload).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from sqlalchemy.orm import Session

from app.services.jobs.claiming import claim_next, failing
from app.services.jobs.heartbeat import heartbeats
from app.services.jobs.kinds import SCORING, JobContext, JobKind
from app.services.scoring import programs, steps
from app.services.scoring.handoff import Parsed
from app.services.scoring.steps import Claim
from app.storage.models import Submission
from app.storage.types import utcnow
from scorers import ScoreReport
from scorers.io import release_freed_memory
from scorers.split import SplitReport

log = logging.getLogger(__name__)


def score_submission(ctx: JobContext, submission_id: int) -> None:
    """Score the fairest waiting submission (the message's own when nothing else waits) and store the result
    (or the platform's failure)."""
    retry = ctx.retrying(SCORE_SUBMISSION)
    taken = claim_next(ctx, SCORE_SUBMISSION, submission_id, partial(_claim, ctx), what="submission", give_up=_give_up)
    if taken is None:
        return
    held, data = taken
    try:
        _score(ctx, retry, held, data)
    finally:
        # The upload's memory (its bytes or parse, the scoring's objects) handed back to the system once the job is
        # done, where it was large: a worker process would otherwise keep its largest job's peak while it waits.
        release_freed_memory(len(data) if isinstance(data, bytes) else data.size)


def _score(ctx: JobContext, retry: Callable[[str, Callable[[], Any]], Any], held: Claim, data: bytes | Parsed) -> None:
    """Score the claimed submission (its file's bytes, or this process's parse of the upload) and store the result,
    or the failure."""
    submission_id = held.submission_id
    fail = partial(_fail, held=held)
    with (
        failing(ctx, SCORE_SUBMISSION, submission_id, fail) as attempt,
        heartbeats(
            ctx,
            lambda s, seconds: steps.heartbeat(s, held, now=utcnow(), lease_seconds=seconds),
            f"submission {held.submission_id}",
        ),
    ):
        gold = steps.cached_gold(held, ctx.gold_cache) or retry(
            f"reading the gold of submission {submission_id}",
            lambda: ctx.read(lambda s: steps.load_gold(s, held, gold_cache=ctx.gold_cache)),
        )
        if programs.runs_program(gold):
            if not isinstance(data, bytes):  # nothing is handed over for a program; should it be, read the file
                data = retry(
                    f"reading submission {submission_id}", lambda: ctx.read(lambda s: steps.submitted_file(s, held))
                )
            ran: Scored | programs.ProgramResult = programs.run(
                gold, data, held, settings=ctx.settings, limits=ctx.limits
            )
        else:
            split = held.gold.split
            parts = steps.compute_split(gold, data, split, limits=ctx.limits) if split is not None else None
            report = parts.public if parts is not None else steps.compute(gold, data, limits=ctx.limits)
            ran = Scored(report, steps.interval(gold, held, report), parts)
    if attempt.failed:
        return
    with failing(ctx, SCORE_SUBMISSION, submission_id, fail):
        retry(
            f"storing the score of submission {submission_id}",
            lambda: ctx.write(lambda s: _record(s, held, ran)),
        )


def _claim(
    ctx: JobContext,
    session: Session,
    submission_id: int,
    /,
    *,
    worker: str,
    now: datetime,
    lease_seconds: int,
    max_attempts: int,
) -> tuple[Claim, bytes | Parsed] | None:
    """Claim the submission and read its file, in one transaction; where this process's upload parsed the
    file (``ctx.handoff``), that parse instead of the file."""
    held = steps.claim(
        session, submission_id, worker=worker, now=now, lease_seconds=lease_seconds, max_attempts=max_attempts
    )
    if held is None:
        return None
    parsed = ctx.handoff.take(held.gold.key, held.sha256) if ctx.handoff is not None else None
    # Taken before the commit: should the transaction fail, the retry (or a resent job) reads the file instead.
    return held, parsed if parsed is not None else steps.submitted_file(session, held)


@dataclass(frozen=True)
class Scored:
    """A scorer's report and its interval, ready to store."""

    report: ScoreReport
    interval: dict[str, Any] | None
    #: In a phase with a private split: the whole split report (``report`` is its public part).
    private: SplitReport | None = None


def _record(session: Session, held: Claim, ran: Scored | programs.ProgramResult) -> bool:
    if isinstance(ran, programs.ProgramResult):
        return programs.record(session, held, ran, now=utcnow())
    return steps.record_score(session, held, ran.report, now=utcnow(), interval=ran.interval, private=ran.private)


def _fail(session: Session, reason: str, *, held: Claim) -> bool:
    return steps.record_failure(session, held, now=utcnow(), organizer_message=reason)


def _give_up(session: Session, submission_id: int, reason: str) -> bool:
    return steps.give_up(session, submission_id, now=utcnow(), organizer_message=reason)


SCORE_SUBMISSION = JobKind(name="score_submission", queue=SCORING, row=Submission, run=score_submission)
