"""Fixtures of the distributed tests: PostgreSQL (the session's test database), a broker, private
queue names per test, worker processes, and a web app in this process that sends to the broker.

They skip with the reason when ``PODIUM_TEST_DATABASE_URL`` does not name a PostgreSQL server or
``PODIUM_TEST_REDIS_URL`` / ``PODIUM_TEST_AMQP_URL`` no reachable broker (``.ci/run`` sets all
three). Each test's queues have a prefix of their own (``PODIUM_QUEUE_PREFIX``), so parallel runs on
one broker never take each other's messages; what a test left in the broker is deleted after it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient
from kombu import Connection

from app.config import Settings
from app.main import create_app
from app.services.accounts import users
from app.storage.db import Database
from scorers import register, scorer_names, unregister
from tests.app.builders import make_competition, make_user
from tests.app.distributed.cluster import RedisServer, WorkerProcess, podium_env
from tests.app.s3server import object_storage_settings
from tests.app.slow_scorer import NAME as SLOW
from tests.app.slow_scorer import SlowScorer

QUEUES = ("scoring", "gpu")
PHASE = "/api/v1/competitions/comp/tasks/labels/phases/dev"


@pytest.fixture
def pg(db: Database) -> Database:
    """The test database, which must be PostgreSQL (SQLite is one machine's file)."""
    if db.is_sqlite:
        pytest.skip("the distributed tests need PostgreSQL: set PODIUM_TEST_DATABASE_URL")
    return db


def _reachable_redis(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=2)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def _reachable_amqp(url: str) -> bool:
    with Connection(url, connect_timeout=2) as connection:
        try:
            connection.ensure_connection(max_retries=1)
            return True
        except Exception:
            return False


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get("PODIUM_TEST_REDIS_URL", "")
    if not url or not _reachable_redis(url):
        pytest.skip(f"no Redis to test against: set PODIUM_TEST_REDIS_URL (now {url or 'unset'!r})")
    return url


@pytest.fixture
def amqp_url() -> str:
    url = os.environ.get("PODIUM_TEST_AMQP_URL", "")
    if not url or not _reachable_amqp(url):
        pytest.skip(f"no RabbitMQ to test against: set PODIUM_TEST_AMQP_URL (now {url or 'unset'!r})")
    return url


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A ``redis-server`` of the test's own on a free port, without persistence: a test may stop and
    start it (losing its messages); the machine's shared Redis is never touched."""
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def prefix() -> str:
    return f"podium-test-{secrets.token_hex(4)}-"


def purge(broker_url: str, prefix: str) -> None:
    """Delete what one test left in the broker: its queues (and, on Redis, their keys and any
    unacknowledged message of theirs)."""
    if broker_url.startswith("redis"):
        client = redis.Redis.from_url(broker_url, socket_connect_timeout=5)
        try:
            keys = list(client.scan_iter(match=f"*{prefix}*"))
            if keys:
                client.delete(*keys)
            for tag, payload in client.hgetall("unacked").items():
                if prefix.encode() in payload:
                    client.hdel("unacked", tag)
                    client.zrem("unacked_index", tag)
        except redis.ConnectionError:  # a test's private server, stopped: nothing left to delete
            pass
        finally:
            client.close()
        return
    with Connection(broker_url, connect_timeout=5) as connection:
        for queue in QUEUES:
            channel = connection.channel()
            try:
                channel.queue_delete(f"{prefix}{queue}")
                channel.exchange_delete(f"{prefix}{queue}")
            except connection.channel_errors:
                pass
            finally:
                channel.close()


@dataclass
class Cluster:
    """One test's distributed Podium: the settings every process shares, and its workers."""

    db: Database
    broker_url: str
    prefix: str
    tmp: Path
    settings: dict[str, str]
    workers: list[WorkerProcess]

    def app_settings(self, **overrides: Any) -> Settings:
        values: dict[str, Any] = {key.removeprefix("PODIUM_").lower(): value for key, value in self.settings.items()}
        values.update(overrides)
        return Settings(**values)

    def worker(self, *args: str, database_url: str | None = None) -> WorkerProcess:
        """Start ``podium worker ARGS`` (not waiting for it to be ready), on another database address
        with ``database_url``."""
        settings = dict(self.settings)
        if database_url is not None:
            settings["PODIUM_DATABASE_URL"] = database_url
        n = len(self.workers) + 1
        process = WorkerProcess(
            list(args) or ["--queues", "scoring"], podium_env(settings), self.tmp / f"worker{n}.log"
        )
        self.workers.append(process)
        return process


#: The settings that say how soon lost or never-sent jobs are sent again; ``requeue_defaults=True``
#: leaves them at Podium's defaults (what the recovery tests promise holds with).
REQUEUE_SETTINGS = ("PODIUM_SWEEP_SECONDS", "PODIUM_REQUEUE_AFTER_SECONDS")


def make_cluster(
    db: Database, broker_url: str, prefix: str, tmp: Path, *, requeue_defaults: bool = False, **settings: str
) -> Iterator[Cluster]:
    base = {
        "PODIUM_DATABASE_URL": db.url,
        "PODIUM_BROKER_URL": broker_url,
        "PODIUM_QUEUE_PREFIX": prefix,
        "PODIUM_PLUGINS": "tests.app.plugins.labels",
        "PODIUM_LEASE_SECONDS": "30",
        "PODIUM_SWEEP_SECONDS": "0.5",
        "PODIUM_REQUEUE_AFTER_SECONDS": "60",
        "PODIUM_TRANSIENT_BACKOFF_SECONDS": "0.2",
        "PODIUM_TRANSIENT_BACKOFF_MAX_SECONDS": "1",
        "PODIUM_TRANSIENT_RETRIES": "15",
        # Every web process of one site signs session cookies with the same key (podium serve refuses to
        # start without one in the distributed mode).
        "PODIUM_SECRET_KEY": secrets.token_hex(32),
    }
    # Files in object storage, as at scale: a bucket of its own on the test S3 server (a folder where
    # moto is not installed); the web app of this process reads the same AWS variables as the workers.
    stored = object_storage_settings(tmp)
    base.update(stored)
    base.update({f"PODIUM_{key.upper()}": value for key, value in settings.items()})
    if requeue_defaults:
        for name in REQUEUE_SETTINGS:
            base.pop(name)
    cluster = Cluster(db, broker_url, prefix, tmp, base, [])
    saved = {name: os.environ.get(name) for name in stored if name.startswith("AWS_")}
    os.environ.update({name: stored[name] for name in saved})
    try:
        yield cluster
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        for worker in cluster.workers:  # all at once: a warm shutdown takes Celery a few seconds
            worker.terminate()
        for worker in cluster.workers:
            worker.stop()
        purge(broker_url, prefix)


@pytest.fixture
def cluster(pg: Database, redis_url: str, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    """A Redis-backed cluster with no worker yet (tests start theirs)."""
    yield from make_cluster(pg, redis_url, prefix, tmp_path)


@pytest.fixture
def slow() -> Iterator[type[SlowScorer]]:
    """The slow test scorer, registered in this process (the workers load it as a plugin)."""
    if SLOW not in scorer_names():
        register(SlowScorer)
    yield SlowScorer
    unregister(SLOW)


def setup_competition(db: Database, **competition: Any) -> dict[str, str]:
    """Users ``olga`` (organizer) and ``ada``, the competition ``comp``; returns ada's auth header."""
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        ada = make_user(session, "ada")
        make_competition(session, organizers=("olga",), **competition)
        token = users.issue_token(session, ada)
        session.commit()
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def web() -> Iterator[Callable[[Settings], TestClient]]:
    """Start the web tier (distributed mode: it sends to the broker and sweeps) on given settings."""
    with ExitStack() as stack:
        yield lambda settings: stack.enter_context(TestClient(create_app(settings)))
