"""Recovery in seconds, with Podium's default sweep and requeue settings: a broker restarted empty
with jobs in it, a web process killed between its commit and its send, an upload whose answer was
lost and sent again by ``podium submit``. Every accepted submission is scored exactly once within
60 s of the fault clearing, and ``/metrics`` counts what was sent again. Real processes throughout:
``podium serve``, ``podium worker``, a private ``redis-server`` (never the machine's shared one) and
RabbitMQ under queue names of the test's own."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import redis
from fastapi.testclient import TestClient
from kombu import Connection
from sqlalchemy import func, select

from app.config import Settings
from app.services.jobs import counters
from app.storage.db import Database
from app.storage.models import Score, Submission
from app.storage.models.operations import BrokerMarker
from tests.app.builders import HALF, as_bytes
from tests.app.distributed.cluster import PODIUM, RedisServer, ServeProcess, TcpProxy, podium_env, wait_for
from tests.app.distributed.conftest import PHASE, Cluster, make_cluster, purge, setup_competition
from tests.app.labels_scorer import LabelScorer
from tests.app.slow_scorer import NAME as SLOW
from tests.app.slow_scorer import SlowScorer
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

#: The promise: every accepted submission scored within this many seconds of the fault clearing.
RECOVERY_SECONDS = 60
FILES = {"file": ("run.json", as_bytes(HALF), "application/json")}


@pytest.fixture
def redis_defaults(pg: Database, private_redis: RedisServer, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    yield from make_cluster(pg, private_redis.url, prefix, tmp_path, requeue_defaults=True)


@pytest.fixture
def amqp_defaults(pg: Database, amqp_url: str, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    yield from make_cluster(pg, amqp_url, prefix, tmp_path, requeue_defaults=True)
    _delete_marker(pg, amqp_url, prefix)


@pytest.fixture
def defaults(pg: Database, redis_url: str, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    yield from make_cluster(pg, redis_url, prefix, tmp_path, requeue_defaults=True)


def scores_per_submission(db: Database) -> dict[int, int]:
    with db.session(read_only=True) as session:
        return dict(session.execute(select(Score.submission_id, func.count()).group_by(Score.submission_id)).all())


def counted(db: Database) -> dict[tuple[str, str], int]:
    with db.session(read_only=True) as session:
        return counters.totals(session)


def scored_within(db: Database, ids: list[int], since: float, what: str) -> float:
    """Wait until each of ``ids`` (and nothing else) is scored exactly once; the seconds since ``since``."""
    wait_for(lambda: scores_per_submission(db) == dict.fromkeys(ids, 1), RECOVERY_SECONDS, what, interval=0.2)
    elapsed = time.monotonic() - since
    print(f"\n{what}: {elapsed:.1f} s after the fault cleared")  # the figure bench/RESULTS.md quotes
    return elapsed


@pytest.mark.timeout(300)
def test_a_broker_restarted_empty_is_noticed_and_what_it_held_is_sent_again(
    pg: Database,
    private_redis: RedisServer,
    redis_defaults: Cluster,
    labels: type[LabelScorer],
    web: Callable[[Settings], TestClient],
) -> None:
    cluster = redis_defaults
    ada = setup_competition(pg)
    client = web(cluster.app_settings())  # a web tier with its sweeper, on the default settings
    marker = redis.Redis.from_url(private_redis.url)
    wait_for(lambda: marker.get(f"{cluster.prefix}podium-marker") is not None, 30, "the sweeper's marker")
    marker.close()

    held = []
    for _ in range(3):  # no worker yet: the three messages wait in Redis
        answer = client.post(f"{PHASE}/submissions", headers=ada, files=FILES)
        assert answer.status_code == 202, answer.text
        held.append(answer.json()["id"])
    before = counted(pg)

    private_redis.stop()  # no persistence: the messages are gone
    private_redis.start()
    cleared = time.monotonic()
    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    scored_within(pg, held, cleared, "3 jobs lost with the broker, scored")

    after = counted(pg)
    assert after.get(("broker_losses", ""), 0) - before.get(("broker_losses", ""), 0) == 1
    assert after.get(("resent", "score_submission"), 0) - before.get(("resent", "score_submission"), 0) >= 3
    metrics = client.get("/metrics").text
    assert "podium_broker_loss_detections_total 1.0" in metrics, metrics
    assert 'podium_jobs_resent_total{kind="score_submission"}' in metrics


@pytest.mark.timeout(300)
def test_a_broker_restarted_empty_under_a_busy_worker(
    pg: Database,
    private_redis: RedisServer,
    redis_defaults: Cluster,
    slow: type[SlowScorer],
    web: Callable[[Settings], TestClient],
) -> None:
    # What an operator sees: a worker busy with one job while others wait in Redis, and Redis
    # restarted without its data. Nobody starts: the running sweepers have to notice.
    cluster = redis_defaults
    ada = setup_competition(pg, scorer=SLOW, scorer_options={"seconds": 2})
    client = web(cluster.app_settings())
    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    ids = []
    for _ in range(4):
        answer = client.post(f"{PHASE}/submissions", headers=ada, files=FILES)
        assert answer.status_code == 202, answer.text
        ids.append(answer.json()["id"])
    wait_for(lambda: _statuses(pg).count("running") == 1, 30, "the worker to take the first job")
    private_redis.stop()
    private_redis.start()
    cleared = time.monotonic()
    scored_within(pg, ids, cleared, "4 jobs (3 lost with the broker, 1 running), scored")
    assert counted(pg).get(("broker_losses", ""), 0) == 1


def _statuses(db: Database) -> list[str]:
    with db.session(read_only=True) as session:
        return [str(status) for status in session.scalars(select(Submission.status))]


@pytest.mark.timeout(300)
def test_a_web_process_killed_between_its_commit_and_its_send(
    pg: Database, defaults: Cluster, labels: type[LabelScorer]
) -> None:
    cluster = defaults
    ada = setup_competition(pg)
    settings = dict(cluster.settings)
    settings["PODIUM_PLUGINS"] += ",tests.app.plugins.die_before_send"
    server = ServeProcess(podium_env(settings), cluster.tmp / "serve.log").wait_ready()
    try:
        with pytest.raises(httpx.TransportError):  # the server died before answering
            httpx.post(f"{server.url}{PHASE}/submissions", headers=ada, files=FILES, timeout=60)
        assert server.process.wait(30) == -9
    finally:
        server.stop()
    killed = time.monotonic()
    with pg.session(read_only=True) as session:
        stranded = session.execute(select(Submission.id, Submission.status, Submission.sent_at)).all()
    assert [(status, sent) for _, status, sent in stranded] == [("queued", None)]  # committed, never sent

    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    scored_within(pg, [stranded[0].id], killed, "a job whose send never happened, scored")
    assert counted(pg).get(("resent", "score_submission")) == 1


@pytest.mark.timeout(300)
def test_an_upload_whose_answer_was_lost_is_stored_and_scored_once(
    pg: Database, defaults: Cluster, labels: type[LabelScorer], tmp_path: Path
) -> None:
    cluster = defaults
    ada = setup_competition(pg)
    token = ada["Authorization"].removeprefix("Bearer ")
    server = ServeProcess(podium_env(cluster.settings), cluster.tmp / "serve.log").wait_ready()
    proxy = TcpProxy(("127.0.0.1", server.port), lose_answers=1)
    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    run = tmp_path / "run.json"
    run.write_bytes(as_bytes(HALF))
    try:
        started = time.monotonic()
        server_url = f"http://127.0.0.1:{proxy.port}"
        options = ["--server", server_url, "--token", token, "--task", "comp/labels/dev", "--wait", "--json"]
        result = subprocess.run(
            [PODIUM, "submit", str(run), *options],
            cwd=ROOT,
            env=podium_env({}),
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        proxy.close()
        server.stop()
    assert result.returncode == 0, result.stderr
    assert "sending it again" in result.stderr  # the lost answer was noticed and the upload retried
    printed = json.loads(result.stdout)
    assert printed["status"] == "scored"
    assert scores_per_submission(pg) == {printed["id"]: 1}  # one submission, scored once
    print(f"\nan upload whose answer was lost: scored {time.monotonic() - started:.1f} s after it was sent")


@pytest.mark.timeout(300)
def test_a_retry_while_the_first_upload_is_still_being_checked_gets_the_same_submission(
    pg: Database, defaults: Cluster, slow: type[SlowScorer]
) -> None:
    # Each upload takes 2 s to check; the second request with the same key arrives while the first
    # is being checked, and both get the first one's submission.
    cluster = defaults
    ada = setup_competition(pg, scorer=SLOW, scorer_options={"parse_seconds": 2})
    server = ServeProcess(podium_env(cluster.settings), cluster.tmp / "serve.log").wait_ready()
    answers: list[httpx.Response] = []

    def post() -> None:
        headers = {**ada, "Idempotency-Key": "retry-1"}
        answers.append(httpx.post(f"{server.url}{PHASE}/submissions", headers=headers, files=FILES, timeout=60))

    try:
        first = threading.Thread(target=post)
        first.start()
        time.sleep(0.5)
        post()
        first.join(60)
    finally:
        server.stop()
    assert [a.status_code for a in answers] == [202, 202], [a.text for a in answers]
    assert answers[0].json()["id"] == answers[1].json()["id"]
    assert sorted(a.headers.get("Idempotent-Replayed", "") for a in answers) == ["", "true"]
    with pg.session(read_only=True) as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 1


@pytest.mark.timeout(300)
def test_a_rabbitmq_that_lost_its_queues_is_noticed_and_what_it_held_is_sent_again(
    pg: Database, amqp_url: str, amqp_defaults: Cluster, labels: type[LabelScorer], web: Callable[..., TestClient]
) -> None:
    # The shared RabbitMQ is not restarted: what a node that failed over empty looks like to this
    # instance is its queues and marker gone, which the test does by deleting them.
    cluster = amqp_defaults
    ada = setup_competition(pg)
    client = web(cluster.app_settings())
    wait_for(lambda: _marker_exists(pg, amqp_url, cluster.prefix), 30, "the sweeper's marker queue")
    held = []
    for _ in range(2):  # no worker yet: the messages wait in RabbitMQ
        answer = client.post(f"{PHASE}/submissions", headers=ada, files=FILES)
        assert answer.status_code == 202, answer.text
        held.append(answer.json()["id"])
    purge(amqp_url, cluster.prefix)  # the queues and their messages ...
    _delete_marker(pg, amqp_url, cluster.prefix)  # ... and the marker
    cleared = time.monotonic()
    # The web process's sweeper notices the loss and sends both again, before any worker declared the
    # queues: they are in the broker, not routed nowhere by a client that thinks the queues exist.
    wait_for(lambda: counted(pg).get(("broker_losses", ""), 0) == 1, 30, "the sweeper to notice the loss")
    wait_for(lambda: _waiting(amqp_url, cluster.prefix) == 2, 10, "the 2 jobs sent again to wait in RabbitMQ")
    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    scored_within(pg, held, cleared, "2 jobs lost with RabbitMQ's queues, scored")
    assert counted(pg).get(("broker_losses", ""), 0) == 1


def _waiting(amqp_url: str, prefix: str) -> int | None:
    """Messages in the scoring queue (``None`` when the queue does not exist)."""
    with Connection(amqp_url) as connection:
        channel = connection.channel()
        try:
            return int(channel.queue_declare(queue=f"{prefix}scoring", passive=True)[1])
        except connection.channel_errors:
            return None
        finally:
            channel.close()


def _marker_queue(db: Database, prefix: str) -> str | None:
    """The marker queue the database's token names (``None`` before the first sweep)."""
    with db.session(read_only=True) as session:
        token = session.scalar(select(BrokerMarker.token).where(BrokerMarker.name == prefix))
    return f"{prefix}podium-marker-{token}" if token else None


def _marker_exists(db: Database, amqp_url: str, prefix: str) -> bool:
    name = _marker_queue(db, prefix)
    if name is None:
        return False
    with Connection(amqp_url) as connection:
        channel = connection.channel()
        try:
            channel.queue_declare(queue=name, passive=True)
            return True
        except connection.channel_errors:
            return False
        finally:
            channel.close()


def _delete_marker(db: Database, amqp_url: str, prefix: str) -> None:
    name = _marker_queue(db, prefix)
    if name is not None:
        with Connection(amqp_url) as connection:
            channel = connection.channel()
            try:
                channel.queue_delete(queue=name)
            finally:
                channel.close()
