"""``podium worker`` and ``podium serve``'s distributed options, run in-process: their refusals."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from app.cli import app
from app.storage.db import Database
from tests.app.distributed.cluster import free_port


def podium(*args: str, **env: str) -> Result:
    return CliRunner().invoke(app, list(args), env=env)


def test_a_worker_needs_a_broker(db: Database) -> None:
    result = podium("worker", "--queues", "scoring", PODIUM_DATABASE_URL=db.url, PODIUM_BROKER_URL="")
    assert result.exit_code == 2
    assert "PODIUM_BROKER_URL is not set" in result.stderr


def test_a_worker_refuses_unknown_queues(db: Database) -> None:
    broker = f"redis://127.0.0.1:{free_port()}/0"
    result = podium("worker", "--queues", "scoring,cpu", PODIUM_DATABASE_URL=db.url, PODIUM_BROKER_URL=broker)
    assert result.exit_code == 2
    assert "--queues must name some of scoring, gpu; got 'cpu'" in result.stderr


def test_the_ping_fails_when_the_broker_is_unreachable(db: Database) -> None:
    broker = f"redis://127.0.0.1:{free_port()}/0"
    result = podium("worker", "--ping", PODIUM_BROKER_URL=broker, PODIUM_BROKER_TIMEOUT_SECONDS="1")
    assert result.exit_code == 1
    assert result.stderr.startswith("cannot reach the broker: OperationalError")


def test_serve_without_migrating_refuses_an_old_schema(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/empty.sqlite3"
    Database(url).dispose()
    result = podium("serve", "--no-migrate", PODIUM_DATABASE_URL=url)
    assert result.exit_code == 2
    assert "the database is at revision none, not " in result.stderr
    assert "run `podium db upgrade` first" in result.stderr


def test_serve_without_migrating_needs_the_database(db: Database) -> None:
    url = f"postgresql+psycopg://podium@127.0.0.1:{free_port()}/podium"
    result = podium("serve", "--no-migrate", PODIUM_DATABASE_URL=url)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"cannot reach the database {url}")


def test_a_broken_plugin_stops_the_server_with_its_name(db: Database) -> None:
    result = podium("serve", PODIUM_DATABASE_URL=db.url, PODIUM_PLUGINS="no_such_plugin_module")
    assert result.exit_code == 2
    assert "PODIUM_PLUGINS: cannot import 'no_such_plugin_module'" in result.stderr
