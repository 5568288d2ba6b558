"""Transient errors: retried with exponential backoff, then the submission (or baseline run) is failed
with the reason and the quota given back. The end-to-end cases use a real lock on PostgreSQL: a table locked by
another transaction makes the job's queries hit ``lock_timeout``, an ``OperationalError``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from app.config import Settings
from app.services.baselines.job import run_baseline
from app.services.jobs.kinds import JobContext
from app.services.jobs.retry import GaveUp, backoff, describe, with_retries
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import score_submission
from app.storage.db import Database
from tests.app.labels_baselines import LabelsCopy
from tests.app.labels_scorer import LabelScorer
from tests.app.services.baselines.test_runs import setup, started
from tests.app.worker.test_baseline_job import row as run_row
from tests.app.worker.test_jobs import row, scores, submitted

FAST = Settings(transient_retries=3, transient_backoff_seconds=0.01, transient_backoff_max_seconds=0.02)


def database_down() -> OperationalError:
    """What SQLAlchemy raises when the server refuses the connection."""
    return OperationalError("SELECT 1", {}, ConnectionRefusedError("connection refused\nDETAIL: more"))


def test_the_backoff_doubles_up_to_its_cap() -> None:
    settings = Settings(transient_backoff_seconds=1, transient_backoff_max_seconds=30)
    assert [backoff(settings, retry) for retry in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_a_step_succeeds_after_transient_errors() -> None:
    calls: list[int] = []

    def step() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise database_down()
        return "done"

    assert with_retries(FAST, "reading", step) == "done"
    assert len(calls) == 3


def test_after_the_last_retry_the_reason_names_the_step_and_the_error() -> None:
    calls: list[int] = []

    def step() -> None:
        calls.append(1)
        raise database_down()

    with pytest.raises(GaveUp) as caught:
        with_retries(FAST, "claiming submission 7", step)
    assert len(calls) == 4  # the first try and 3 retries
    # Waited 0.01 + 0.02 + 0.02 s; only the first line of the driver's message is kept.
    assert caught.value.reason == (
        "gave up claiming submission 7 after 4 tries over 0.05 s of waiting; "
        "the last error was OperationalError: (builtins.ConnectionRefusedError) connection refused"
    )


def test_other_errors_are_not_retried() -> None:
    calls: list[int] = []

    def step() -> None:
        calls.append(1)
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        with_retries(FAST, "reading", step)
    assert len(calls) == 1
    assert describe(ValueError("")) == "ValueError"


# -- a job against a locked table (PostgreSQL) ----------------------------------------------------


@contextmanager
def locked_blobs(db: Database) -> Iterator[threading.Event]:
    """Hold an exclusive lock on the blobs table until the yielded event is set (or the block ends)."""
    release = threading.Event()
    engine = create_engine(make_url(db.url))
    connection = engine.connect()
    connection.execute(text("LOCK TABLE blobs IN ACCESS EXCLUSIVE MODE"))

    def wait_and_unlock() -> None:
        release.wait(60)
        connection.rollback()

    holder = threading.Thread(target=wait_and_unlock)
    holder.start()
    try:
        yield release
    finally:
        release.set()
        holder.join()
        connection.close()
        engine.dispose()


def impatient(db: Database, **settings: float) -> JobContext:
    """A job context whose queries give up waiting for a lock after 100 ms."""
    if db.is_sqlite:
        pytest.skip("needs PostgreSQL's lock_timeout: set PODIUM_TEST_DATABASE_URL")
    url = make_url(db.url).update_query_dict({"options": "-c lock_timeout=100"}).render_as_string(hide_password=False)
    values = {"transient_retries": 4, "transient_backoff_seconds": 0.05, "transient_backoff_max_seconds": 0.2}
    values.update(settings)
    return JobContext(Database(url), Settings(database_url=url, lease_seconds=30, **values), GoldCache())


def test_a_job_waits_out_a_transient_lock(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db)
    ctx = impatient(db, transient_retries=30)
    try:
        with locked_blobs(db) as release:
            threading.Timer(0.5, release.set).start()  # released while the job retries
            score_submission(ctx, submission_id)
    finally:
        ctx.db.dispose()
    done = row(db, submission_id)
    assert (done.status, done.attempts, done.quota_refunded) == ("scored", 1, False)
    assert len(scores(db, submission_id)) == 1


def test_a_job_that_keeps_failing_fails_the_submission_and_refunds_it(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db)
    ctx = impatient(db)
    try:
        with locked_blobs(db):
            score_submission(ctx, submission_id)
    finally:
        ctx.db.dispose()
    failed = row(db, submission_id)
    assert (failed.status, failed.quota_refunded, failed.attempts) == ("failed", True, 0)
    assert failed.organizer_message.startswith(f"gave up claiming submission {submission_id} after 5 tries")
    assert "LockNotAvailable" in failed.organizer_message
    assert "problem on our side" in failed.participant_message
    assert scores(db, submission_id) == []


# -- hosted baseline runs ride out the same trouble --------------------------------------------------


def test_a_baseline_run_waits_out_a_transient_lock(db: Database, system: type[LabelsCopy]) -> None:
    setup(db)
    run_id = started(db)
    ctx = impatient(db, transient_retries=30)
    try:
        with locked_blobs(db) as release:
            threading.Timer(0.5, release.set).start()  # released while the job retries
            run_baseline(ctx, run_id)
    finally:
        ctx.db.dispose()
    done = run_row(db, run_id)
    assert (done.status, done.attempts, done.error) == ("succeeded", 1, "")
    assert done.submission_id is not None


def test_a_baseline_run_that_keeps_failing_is_failed_with_the_reason(db: Database, system: type[LabelsCopy]) -> None:
    setup(db)
    run_id = started(db)
    ctx = impatient(db)
    try:
        with locked_blobs(db):
            run_baseline(ctx, run_id)
    finally:
        ctx.db.dispose()
    failed = run_row(db, run_id)
    assert (failed.status, failed.attempts, failed.submission_id) == ("failed", 0, None)
    assert failed.error.startswith(f"gave up claiming baseline run {run_id} after 5 tries")
    assert "LockNotAvailable" in failed.error
