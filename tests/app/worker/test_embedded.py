"""The embedded pool: it resumes waiting submissions when it starts, and runs what is enqueued."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import pytest

from app.config import Settings
from app.services.jobs.kinds import JobContext
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import SCORE_SUBMISSION
from app.storage.db import Database
from app.storage.types import utcnow
from app.worker.embedded import EmbeddedPool
from tests.app.labels_scorer import LabelScorer
from tests.app.worker.test_jobs import claim, row, submitted


@pytest.fixture
def pool(db: Database) -> Iterator[EmbeddedPool]:
    ctx = JobContext(db, Settings(database_url=db.url, lease_seconds=30), GoldCache())
    embedded = EmbeddedPool(ctx, workers=2, sweep_seconds=3600)
    yield embedded
    embedded.stop()


def test_starting_resumes_queued_submissions(db: Database, labels: type[LabelScorer], pool: EmbeddedPool) -> None:
    submission_id = submitted(db)
    pool.start()
    assert pool.wait_idle(30)
    assert row(db, submission_id).status == "scored"


def test_starting_resumes_interrupted_submissions(db: Database, labels: type[LabelScorer], pool: EmbeddedPool) -> None:
    submission_id = submitted(db)
    assert claim(db, submission_id, utcnow() - timedelta(seconds=60)) is not None  # a worker that died
    pool.start()
    assert pool.wait_idle(30)
    done = row(db, submission_id)
    assert (done.status, done.attempts) == ("scored", 2)


def test_a_job_is_queued_once_while_it_waits(db: Database, pool: EmbeddedPool) -> None:
    pool.enqueue(SCORE_SUBMISSION, 7)
    pool.enqueue(SCORE_SUBMISSION, 7)
    pool.enqueue(SCORE_SUBMISSION, 8)
    assert pool._lanes["scoring"].qsize() == 2


def test_an_enqueued_job_runs(db: Database, labels: type[LabelScorer], pool: EmbeddedPool) -> None:
    pool.start()
    submission_id = submitted(db)
    assert row(db, submission_id).status == "queued"
    pool.enqueue(SCORE_SUBMISSION, submission_id)
    assert pool.wait_idle(30)
    assert row(db, submission_id).status == "scored"


def test_a_job_enqueued_again_while_it_runs_runs_again(db: Database, pool: EmbeddedPool) -> None:
    """A row queued again while its job still runs (a rescore accepted between the score's commit and the job's
    end) gets its own run: the pool must not drop the message as a duplicate of the one running."""
    started, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def run(ctx: JobContext, row_id: int) -> None:
        runs.append(row_id)
        started.set()
        release.wait(10)

    kind = replace(SCORE_SUBMISSION, run=run)
    pool.start()
    pool.enqueue(kind, 7)
    assert started.wait(10)
    pool.enqueue(kind, 7)
    release.set()
    assert pool.wait_idle(30)
    assert runs == [7, 7]
