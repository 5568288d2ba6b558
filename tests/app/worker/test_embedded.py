"""The embedded pool: it resumes waiting submissions when it starts, and runs what is enqueued."""

from __future__ import annotations

from collections.abc import Iterator
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
