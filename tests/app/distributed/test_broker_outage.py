"""The broker stopped and started again (a private ``redis-server`` without persistence, so stopping
it also loses the messages it held): uploads are accepted meanwhile, and everything is scored once
when it is back, both what was never sent and what the broker lost."""

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
from tests.app.distributed.cluster import RedisServer, wait_for
from tests.app.distributed.conftest import PHASE, Cluster, make_cluster, setup_competition
from tests.app.labels_scorer import LabelScorer

pytestmark = pytest.mark.slow


@pytest.fixture
def private_cluster(pg: Database, private_redis: RedisServer, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    # A message sent more than 3 s ago for a row still queued counts as lost.
    yield from make_cluster(pg, private_redis.url, prefix, tmp_path, requeue_after_seconds="3")


def states(db: Database) -> dict[int, tuple[str, bool]]:
    """Each submission's status, and whether its row says a message is out."""
    with db.session(read_only=True) as session:
        rows = session.execute(select(Submission.id, Submission.status, Submission.enqueued_at)).all()
    return {id_: (status, sent is not None) for id_, status, sent in rows}


def scores_per_submission(db: Database) -> dict[int, int]:
    with db.session(read_only=True) as session:
        query = select(Score.submission_id, func.count()).group_by(Score.submission_id)
        return dict(session.execute(query).all())


@pytest.mark.timeout(300)
def test_uploads_while_the_broker_is_down_are_scored_once_it_is_back(
    pg: Database,
    private_redis: RedisServer,
    private_cluster: Cluster,
    labels: type[LabelScorer],
    web: Callable[[Settings], TestClient],
) -> None:
    ada = setup_competition(pg)
    client = web(private_cluster.app_settings())
    files = {"file": ("run.json", as_bytes(HALF), "application/json")}

    def upload() -> int:
        answer = client.post(f"{PHASE}/submissions", headers=ada, files=files)
        assert answer.status_code == 202, answer.text
        assert answer.json()["status"] == "queued"
        return int(answer.json()["id"])

    sent = [upload() for _ in range(3)]  # no worker yet: the messages wait in Redis
    assert states(pg) == dict.fromkeys(sent, ("queued", True))

    private_redis.stop()  # ... and are lost with it
    unsent = [upload() for _ in range(3)]  # accepted and stored all the same
    assert {id_: states(pg)[id_][0] for id_ in unsent} == dict.fromkeys(unsent, "queued")
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"] == {"database": "ok", "broker": "unreachable"}

    private_redis.start()
    private_cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    everything = sent + unsent
    wait_for(lambda: scores_per_submission(pg) == dict.fromkeys(everything, 1), 60, "all six to be scored")
    assert client.get("/readyz").json() == {"status": "ready", "checks": {"database": "ok", "broker": "ok"}}

    # A running worker rides out a broker restart and takes the next jobs when it is back.
    private_redis.stop()
    private_redis.start()
    later = [upload() for _ in range(2)]
    wait_for(lambda: scores_per_submission(pg) == dict.fromkeys(everything + later, 1), 60, "the later two")
    assert set(states(pg).values()) == {("scored", True)}
