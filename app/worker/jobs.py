"""The job functions: plain functions of a ``JobContext`` and row ids.

Each job re-reads its rows, calls the services, and owns its transactions (short ones: the scorer
runs outside any transaction). The embedded pool calls them in threads of the server process; a
Celery task in distributed mode calls the very same functions with a context built in the worker.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from app.config import Settings
from app.services.baselines.runs import RUN_BASELINE
from app.services.jobs.enqueue import QUEUE_KEY, SCORE_SUBMISSION, JobQueue
from app.services.scoring import steps
from app.services.scoring.gold import GoldCache, ParsedGold
from app.services.submissions.limits import Limits
from app.storage.db import Database
from app.storage.types import utcnow
from app.worker.baseline_job import run_baseline
from app.worker.retry import TRANSIENT_ERRORS, GaveUp, with_retries
from scorers import ScoreReport

log = logging.getLogger(__name__)


@dataclass
class JobContext:
    """What a job needs besides its ids: the database, settings, the gold cache and the queue for follow-ups."""

    db: Database
    settings: Settings
    gold_cache: GoldCache
    queue: JobQueue | None = None
    name: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")

    @property
    def limits(self) -> Limits:
        s = self.settings
        return Limits(s.max_upload_bytes, s.max_unzipped_bytes, s.max_zip_entries)

    def session(self, *, read_only: bool = False) -> Session:
        return self.db.session(read_only=read_only, info={QUEUE_KEY: self.queue})

    @property
    def worker(self) -> str:
        return f"{self.name}/{threading.current_thread().name}"


@contextmanager
def _heartbeats(ctx: JobContext, found: steps.Claim) -> Iterator[None]:
    """Extend the claim's lease every third of its length while the body runs."""
    stop = threading.Event()
    interval = max(1.0, ctx.settings.lease_seconds / 3)

    def beat() -> None:
        while not stop.wait(interval):
            try:
                with ctx.session() as session:
                    alive = steps.heartbeat(session, found, now=utcnow(), lease_seconds=ctx.settings.lease_seconds)
                    session.commit()
                if not alive:
                    return
            except Exception:  # a missed beat is not fatal; the next one may get through
                log.warning("heartbeat for submission %s failed", found.submission_id, exc_info=True)

    thread = threading.Thread(target=beat, name=f"heartbeat-{found.submission_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def score_submission(ctx: JobContext, submission_id: int) -> None:
    """Score one submission's current round and store the result (or the platform's failure).

    Each database step is retried after transient errors (``app.worker.retry``); when a step gives
    up, the submission is failed with the reason for the organizers and the quota given back."""
    settings = ctx.settings
    try:
        found = with_retries(settings, f"claiming submission {submission_id}", lambda: _claim(ctx, submission_id))
    except GaveUp as exc:
        _give_up(ctx, submission_id, None, exc)
        return
    if found is None:
        return
    try:
        with _heartbeats(ctx, found):
            parsed, data = with_retries(
                settings, f"reading the files of submission {submission_id}", lambda: _inputs(ctx, found)
            )
            report = steps.compute(parsed, data, limits=ctx.limits)
    except GaveUp as exc:
        _give_up(ctx, submission_id, found, exc)
        return
    except Exception as exc:
        log.exception("scoring submission %s failed", submission_id)
        message = _describe_error(exc)
        try:
            with_retries(settings, "recording a failure", lambda: _record_failure(ctx, found, message))
        except GaveUp:  # the lease expires and the sweeper sends the job again
            log.exception("could not record the failure of submission %s", submission_id)
        return
    try:
        with_retries(settings, f"storing the score of submission {submission_id}", lambda: _record(ctx, found, report))
    except GaveUp as exc:
        _give_up(ctx, submission_id, found, exc)


def _claim(ctx: JobContext, submission_id: int) -> steps.Claim | None:
    with ctx.session() as session:
        found = steps.claim(
            session,
            submission_id,
            worker=ctx.worker,
            now=utcnow(),
            lease_seconds=ctx.settings.lease_seconds,
            max_attempts=ctx.settings.max_attempts,
        )
        session.commit()
        return found


def _inputs(ctx: JobContext, found: steps.Claim) -> tuple[ParsedGold, bytes]:
    with ctx.session(read_only=True) as session:
        return steps.load_inputs(session, found, gold_cache=ctx.gold_cache)


def _record(ctx: JobContext, found: steps.Claim, report: ScoreReport) -> None:
    with ctx.session() as session:
        steps.record_score(session, found, report, now=utcnow())
        session.commit()


def _record_failure(ctx: JobContext, found: steps.Claim, message: str) -> None:
    with ctx.session() as session:
        steps.record_failure(session, found, now=utcnow(), organizer_message=message)
        session.commit()


def _give_up(ctx: JobContext, submission_id: int, found: steps.Claim | None, exc: GaveUp) -> None:
    """Fail the submission with the reason, once; if even that cannot be written, the submission is
    left as it is (queued, or running until its lease expires) for the sweeper to send again."""
    log.error("submission %s: %s", submission_id, exc.reason)
    try:
        if found is not None:
            _record_failure(ctx, found, exc.reason)
            return
        with ctx.session() as session:
            steps.give_up(session, submission_id, now=utcnow(), organizer_message=exc.reason)
            session.commit()
    except TRANSIENT_ERRORS:
        log.error("submission %s stays as it is until the database answers again", submission_id)
        if found is None and ctx.queue is not None:
            # Its message was consumed: send it again now rather than after ``requeue_after_seconds``.
            ctx.queue.enqueue(SCORE_SUBMISSION, submission_id)


def _describe_error(exc: BaseException) -> str:
    lines = traceback.format_exception(exc)
    return f"{type(exc).__name__}: {exc}\n\n" + "".join(lines[-30:])


def resume(ctx: JobContext, enqueue: Callable[[str, int], None]) -> list[int]:
    """Send every submission that waits for scoring (queued, or interrupted: running with an expired
    lease) to ``enqueue``; returns their ids."""
    with ctx.session(read_only=True) as session:
        ids = steps.waiting(session, utcnow())
    for submission_id in ids:
        enqueue(SCORE_SUBMISSION, submission_id)
    return ids


#: Job name to function; the embedded pool and the Celery tasks dispatch through this table.
JOBS: dict[str, Callable[..., None]] = {SCORE_SUBMISSION: score_submission, RUN_BASELINE: run_baseline}


def run_job(ctx: JobContext, job: str, *args: int) -> None:
    JOBS[job](ctx, *args)
