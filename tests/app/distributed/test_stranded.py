"""A worker killed after it took a job's message and before its claim committed (for a large upload,
the whole time the file is read), with many uploads waiting behind that job: the job is sent again
within a lease and a sweep, ahead of the jobs sent after it, on Redis (which keeps the message of
a dead worker for its visibility timeout, an hour) as on RabbitMQ (which returns it at once). The
requeue setting is far beyond the test, so only that recovery can score the job in time.

The claim is held open for real: this test holds the submission's row lock, so the worker's claim
``UPDATE`` waits in PostgreSQL with the message delivered, as a slow claim does.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, text

from app.config import Settings
from app.services.jobs import counters
from app.storage.db import Database
from app.storage.models import Submission
from app.worker.broker import queue_name
from tests.app.builders import HALF, as_bytes
from tests.app.distributed.cluster import wait_for
from tests.app.distributed.conftest import PHASE, Cluster, make_cluster, setup_competition
from tests.app.slow_scorer import NAME as SLOW
from tests.app.slow_scorer import SlowScorer

pytestmark = pytest.mark.slow

#: Uploads waiting behind the job of the killed worker.
FRESH = 12
#: Fresh jobs the next worker may start before the stranded one: one lease (3 s) and a few sweeps
#: (0.5 s) take about two fresh jobs of the slow scorer (1 s each).
AHEAD = 3


@pytest.fixture(params=["redis", "rabbitmq"])
def stranding(request: pytest.FixtureRequest, pg: Database, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    """Leases of 3 s, sweeps every 0.5 s, and no requeue of a sent job for ten minutes."""
    broker = request.getfixturevalue("redis_url" if request.param == "redis" else "amqp_url")
    yield from make_cluster(pg, broker, prefix, tmp_path, lease_seconds="3", requeue_after_seconds="600")


def claims_waiting(db: Database) -> int:
    """Statements of this database waiting for a row lock (the worker's claim)."""
    with db.session(read_only=True) as session:
        waiting = text(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return int(session.scalar(waiting) or 0)


def started(db: Database) -> dict[int, tuple[str, datetime | None, int]]:
    with db.session(read_only=True) as session:
        rows = session.execute(select(Submission.id, Submission.status, Submission.started_at, Submission.attempts))
        return {row_id: (str(status), at, attempts) for row_id, status, at, attempts in rows}


def uploader(client: TestClient, headers: dict[str, str]) -> Callable[[], int]:
    """Uploads the same run to the phase as the user of ``headers``; each call returns the new submission's id."""
    files = {"file": ("run.json", as_bytes(HALF), "application/json")}

    def upload() -> int:
        answer = client.post(f"{PHASE}/submissions", headers=headers, files=files)
        assert answer.status_code == 202, answer.text
        return int(answer.json()["id"])

    return upload


@pytest.mark.timeout(300)
def test_a_job_whose_worker_died_before_its_claim_goes_ahead_of_those_sent_after_it(
    pg: Database, stranding: Cluster, slow: type[SlowScorer], web: Callable[[Settings], TestClient]
) -> None:
    cluster = stranding
    ada = setup_competition(pg, scorer=SLOW, scorer_options={"seconds": 1})
    client = web(cluster.app_settings())
    upload = uploader(client, ada)

    stranded = upload()
    with pg.session() as holder:
        holder.execute(select(Submission.id).where(Submission.id == stranded).with_for_update())
        fresh = [upload() for _ in range(FRESH)]  # all sent after it, none taken yet
        first = cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
        # (A sweeper may wait on the row too: once the message is a lease old, it takes the job.)
        wait_for(lambda: claims_waiting(pg) >= 1, 60, "the first worker's claim to wait on the row")
        assert started(pg)[stranded][0] == "queued"
        first.kill()  # it took the message and never claimed the row
        holder.rollback()

    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    wait_for(lambda: all(started(pg)[i][0] == "scored" for i in fresh), 120, f"the {FRESH} fresh jobs to be scored")

    rows = started(pg)
    status, at, attempts = rows[stranded]
    assert status == "scored", f"the killed worker's job is still {status} after {FRESH} later jobs were scored"
    assert at is not None
    ahead = sorted(i for i in fresh if (rows[i][1] or at) < at)
    assert len(ahead) <= AHEAD, f"{len(ahead)} jobs sent after it were started first: {ahead}"
    assert attempts == 1  # the dead worker's claim never committed
    with pg.session(read_only=True) as session:
        assert session.scalar(select(func.count()).where(Submission.status != "scored")) == 0
        totals = counters.totals(session)
    resumed = totals.get((counters.RESUMED, "score_submission"), 0)
    woken = totals.get((counters.RESENT, "score_submission"), 0)
    if cluster.broker_url.startswith("redis"):
        # The sweepers found the dead worker's message: they sent its job again (still waiting) or, when the
        # next worker had claimed that job for another message already, a wake-up for the job left without one.
        assert resumed + woken >= 1
    else:  # RabbitMQ returned it by itself
        assert resumed == woken == 0


DEAD_CONSUMER = """
import sys, time
from kombu import Connection
with Connection(sys.argv[1]) as connection:
    message = connection.SimpleQueue(sys.argv[2]).get(timeout=30)  # taken, never acknowledged
    print("took", flush=True)
    time.sleep(600)
"""


@pytest.fixture
def waking(pg: Database, redis_url: str, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    """On Redis, leases of 20 s (the next worker claims before a sweeper finds the dead message stale)
    and no requeue of a sent job for ten minutes."""
    yield from make_cluster(pg, redis_url, prefix, tmp_path, lease_seconds="20", requeue_after_seconds="600")


@pytest.mark.timeout(240)
def test_a_dead_workers_message_whose_job_another_message_claimed_wakes_the_job_left_without_one(
    pg: Database, waking: Cluster, redis_url: str, slow: type[SlowScorer], web: Callable[[Settings], TestClient]
) -> None:
    # A message only wakes a worker, which claims the fairest row: here the next worker's message (the second
    # upload's) claims the first upload, whose message died with its worker, so the second upload waits on a
    # message that will never come. Only a wake-up from the sweepers scores it before the (far) requeue.
    cluster = waking
    ada = setup_competition(pg, scorer=SLOW, scorer_options={"seconds": 0.2})
    client = web(cluster.app_settings())
    upload = uploader(client, ada)

    first = upload()
    queue = queue_name(cluster.app_settings(), "scoring")
    dead = subprocess.Popen([sys.executable, "-c", DEAD_CONSUMER, redis_url, queue], stdout=subprocess.PIPE, text=True)
    try:
        assert dead.stdout is not None and dead.stdout.readline().strip() == "took"
    finally:
        dead.kill()
        dead.communicate()
    second = upload()
    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    wait_for(lambda: started(pg)[first][0] == "scored", 60, "the first upload to be scored (for the second's message)")
    wait_for(lambda: started(pg)[second][0] == "scored", 120, "the second upload, left without a message, to be scored")
    with pg.session(read_only=True) as session:
        totals = counters.totals(session)
    sent_again = totals.get((counters.RESUMED, "score_submission"), 0) + totals.get(
        (counters.RESENT, "score_submission"), 0
    )
    assert sent_again == 1
