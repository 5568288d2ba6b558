"""A burst of uploads over two ``podium worker`` processes: every submission scored exactly once.

The web tier runs in this process (it sends each job to the broker after its commit and sweeps);
the two workers are real ``podium worker --queues scoring --concurrency 1`` processes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.config import Settings
from app.storage.db import Database
from app.storage.models import Score, Submission
from tests.app.builders import HALF, as_bytes
from tests.app.distributed.cluster import pids_of, wait_for
from tests.app.distributed.conftest import PHASE, Cluster, make_cluster, setup_competition
from tests.app.labels_scorer import LabelScorer

pytestmark = pytest.mark.slow


def scored_count(db: Database) -> int:
    with db.session(read_only=True) as session:
        return session.scalar(select(func.count()).where(Submission.status == "scored")) or 0


def burst(db: Database, cluster: Cluster, web: Callable[[Settings], TestClient], n: int) -> None:
    ada = setup_competition(db)
    workers = [cluster.worker("--queues", "scoring", "--concurrency", "1") for _ in range(2)]
    for worker in workers:
        worker.wait_ready()
    client = web(cluster.app_settings())
    files = {"file": ("run.json", as_bytes(HALF), "application/json")}
    ids = []
    for _ in range(n):
        answer = client.post(f"{PHASE}/submissions", headers=ada, files=files)
        assert answer.status_code == 202, answer.text
        ids.append(answer.json()["id"])
    wait_for(lambda: scored_count(db) == n, 120, f"{n} submissions to be scored")

    with db.session(read_only=True) as session:
        per_submission = dict(
            session.execute(select(Score.submission_id, func.count()).group_by(Score.submission_id)).all()
        )
        rows = session.execute(select(Submission.status, Submission.attempts, Submission.worker)).all()
    assert per_submission == dict.fromkeys(ids, 1)  # each one scored, and only once
    assert {(status, attempts) for status, attempts, _ in rows} == {("scored", 1)}
    # Both processes took part: the worker column names the worker process and its pool child.
    claimers = {pids_of(name) for *_, name in rows}
    assert {main for main, _ in claimers} == {w.pid for w in workers}
    by_pid = {w.pid: w for w in workers}
    assert all(child != main and by_pid[main].owns(child) for main, child in claimers)


@pytest.mark.timeout(300)
def test_200_submissions_over_two_workers_are_each_scored_once(
    pg: Database,
    cluster: Cluster,
    labels: type[LabelScorer],
    web: Callable[[Settings], TestClient],
) -> None:
    burst(pg, cluster, web, 200)


@pytest.fixture
def rabbit_cluster(pg: Database, amqp_url: str, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    yield from make_cluster(pg, amqp_url, prefix, tmp_path)


@pytest.mark.timeout(300)
def test_rabbitmq_carries_the_jobs_too(
    pg: Database,
    rabbit_cluster: Cluster,
    labels: type[LabelScorer],
    web: Callable[[Settings], TestClient],
) -> None:
    burst(pg, rabbit_cluster, web, 40)
