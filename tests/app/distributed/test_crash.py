"""A worker killed with SIGKILL in the middle of a job: another worker scores that submission, once,
after the lease expired, and the team's quota counts it once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import Settings
from app.services.submissions import quota
from app.storage.db import Database
from app.storage.models import Phase, Score, Submission
from app.storage.types import utcnow
from tests.app.builders import HALF, as_bytes, phase_spec
from tests.app.distributed.cluster import pids_of, wait_for
from tests.app.distributed.conftest import PHASE, Cluster, make_cluster, setup_competition
from tests.app.slow_scorer import NAME as SLOW
from tests.app.slow_scorer import SlowScorer

pytestmark = pytest.mark.slow


def row(db: Database, submission_id: int) -> Submission:
    with db.session(read_only=True) as session:
        found = session.get(Submission, submission_id)
        assert found is not None
        return found


@pytest.fixture
def short_lease(pg: Database, redis_url: str, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    """A cluster whose leases last 3 s (a heartbeat every second keeps a live job's lease)."""
    yield from make_cluster(pg, redis_url, prefix, tmp_path, lease_seconds="3")


@pytest.mark.timeout(300)
def test_a_submission_whose_worker_was_killed_is_scored_once_by_another(
    pg: Database, short_lease: Cluster, slow: type[SlowScorer], web: Callable[[Settings], TestClient]
) -> None:
    cluster = short_lease
    ada = setup_competition(pg, scorer=SLOW, scorer_options={"seconds": 3}, phases=(phase_spec(total_limit=2),))
    first = cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    client = web(cluster.app_settings())
    files = {"file": ("run.json", as_bytes(HALF), "application/json")}
    answer = client.post(f"{PHASE}/submissions", headers=ada, files=files)
    assert answer.status_code == 202, answer.text
    assert answer.json()["quota"]["total_used"] == 1
    submission_id = answer.json()["id"]

    wait_for(lambda: row(pg, submission_id).status == "running", 60, "the first worker to claim the submission")
    claimed = row(pg, submission_id)
    assert claimed.worker is not None
    main, child = pids_of(claimed.worker)  # host:workerpid/childpid: the worker and its pool child
    assert main == first.pid and child != main and first.owns(child)
    first.kill()  # mid-job: the scorer is asleep, nothing was acknowledged

    second = cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    wait_for(lambda: row(pg, submission_id).status == "scored", 90, "the second worker to score the submission")

    done = row(pg, submission_id)
    assert done.worker is not None and pids_of(done.worker)[0] == second.pid
    assert (done.attempts, done.quota_refunded, done.participant_message) == (2, False, "")
    with pg.session(read_only=True) as session:
        scores = list(session.scalars(select(Score).where(Score.submission_id == submission_id)))
        phase = session.get(Phase, done.phase_id)
        assert phase is not None
        usage = quota.usage(session, phase, done.team_id, utcnow())
    assert [(s.round, s.metrics) for s in scores] == [(1, {"accuracy": 0.5})]  # 2 of 4 labels right, once
    assert (usage.total_used, usage.total_left) == (1, 1)  # counted once, not refunded, not twice


@pytest.fixture(params=["redis", "rabbitmq"])
def short_lease_any(request: pytest.FixtureRequest, pg: Database, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    """A short-lease cluster on Redis, then on RabbitMQ."""
    broker = request.getfixturevalue("redis_url" if request.param == "redis" else "amqp_url")
    yield from make_cluster(pg, broker, prefix, tmp_path, lease_seconds="3")


@pytest.mark.timeout(300)
def test_a_resumed_job_goes_ahead_of_fresh_ones(
    pg: Database, short_lease_any: Cluster, slow: type[SlowScorer], web: Callable[[Settings], TestClient]
) -> None:
    cluster = short_lease_any
    ada = setup_competition(pg, scorer=SLOW, scorer_options={"seconds": 2})
    first = cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    client = web(cluster.app_settings())
    files = {"file": ("run.json", as_bytes(HALF), "application/json")}

    def upload() -> int:
        answer = client.post(f"{PHASE}/submissions", headers=ada, files=files)
        assert answer.status_code == 202, answer.text
        return int(answer.json()["id"])

    interrupted = upload()
    wait_for(lambda: row(pg, interrupted).status == "running", 60, "the first worker to claim the submission")
    first.kill()
    fresh = [upload() for _ in range(5)]  # queued behind it, while nobody works
    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    everything = [interrupted, *fresh]
    wait_for(lambda: {row(pg, i).status for i in everything} == {"scored"}, 120, "all six to be scored")

    order = sorted(everything, key=lambda i: row(pg, i).finished_at or utcnow())
    # Sent again once its lease expired, after the five fresh ones were queued, it goes ahead of the
    # fresh ones still waiting then: scored first, or after the one or two jobs the new worker took
    # before a sweeper sent it (in the order of sending it would be last).
    assert order.index(interrupted) <= 2, order
    assert row(pg, interrupted).attempts == 2
