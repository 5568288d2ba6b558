"""Sending jobs to Celery after the commit: the row is stamped in the transaction, a refused send
clears the stamp (the sweeper sends it later), and nothing raises or hangs while the broker is down."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest
import redis

from app.config import Settings
from app.services.accounts.users import find_user
from app.services.jobs.kinds import QUEUE_KEY
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import SCORE_SUBMISSION
from app.services.submissions import intake
from app.services.submissions.limits import Limits
from app.storage.db import Database
from app.worker.celery_app import make_celery
from app.worker.celery_queue import CeleryQueue
from tests.app.builders import HALF, as_bytes, make_competition, make_user
from tests.app.distributed.cluster import free_port
from tests.app.labels_scorer import LabelScorer
from tests.app.worker.test_jobs import row

LIMITS = Limits(1 << 20, 1 << 20, 4)


@pytest.fixture
def people(db: Database, labels: type[LabelScorer]) -> Database:
    with db.session() as session:
        make_user(session, "ada")
        make_competition(session)
        session.commit()
    return db


def upload(db: Database, queue: CeleryQueue) -> int:
    """One upload through a session whose jobs go to ``queue``, as a web request does."""
    with db.session(info={QUEUE_KEY: queue}) as session:
        accepted = intake.submit(
            session,
            find_user(session, "ada"),
            ("comp", "labels", "dev"),
            intake.Upload(as_bytes(HALF), "run.json"),
            limits=LIMITS,
            gold_cache=GoldCache(),
        )
        session.commit()  # sends after the commit; must neither raise nor hang
        return accepted.submission.id


@pytest.fixture
def down(people: Database) -> Iterator[CeleryQueue]:
    """A queue whose broker is a port nothing listens on."""
    settings = Settings(database_url=people.url, broker_url=f"redis://127.0.0.1:{free_port()}/0", sweep_seconds=60)
    queue = CeleryQueue(make_celery(settings), people, settings)
    yield queue
    queue.close()


def test_an_upload_while_the_broker_is_down_waits_for_the_sweeper(
    people: Database, labels: type[LabelScorer], down: CeleryQueue
) -> None:
    first = upload(people, down)
    second = upload(people, down)  # within sweep_seconds of a refusal: not even tried
    for submission_id in (first, second):
        kept = row(people, submission_id)
        assert (kept.status, kept.enqueued_at) == ("queued", None)  # no message out: the sweeper sends it
    assert not down.send(SCORE_SUBMISSION, first)
    with pytest.raises(Exception, match="refused"):
        down.check()


@pytest.fixture
def redis_queue(people: Database) -> Iterator[CeleryQueue]:
    url = os.environ.get("PODIUM_TEST_REDIS_URL", "")
    if not url:
        pytest.skip("no Redis to test against: set PODIUM_TEST_REDIS_URL")
    prefix = f"podium-test-{secrets.token_hex(4)}-"
    settings = Settings(database_url=people.url, broker_url=url, queue_prefix=prefix)
    queue = CeleryQueue(make_celery(settings), people, settings)
    yield queue
    queue.close()
    client = redis.Redis.from_url(url)
    keys = list(client.scan_iter(match=f"*{prefix}*"))
    if keys:
        client.delete(*keys)
    client.close()


def test_a_sent_job_is_stamped_and_waits_in_its_queue(
    people: Database, labels: type[LabelScorer], redis_queue: CeleryQueue
) -> None:
    submission_id = upload(people, redis_queue)
    assert row(people, submission_id).enqueued_at is not None
    redis_queue.check()
    assert redis_queue.queue_lengths() == {"scoring": 1, "gpu": 0}
