"""Both databases in one test run: ``each_database`` runs a test on SQLite and on PostgreSQL (a fresh
database on the server of ``PODIUM_TEST_DATABASE_URL``; skipped, saying so, where none is set), each
built by the migrations, and ``app_on`` serves the real app on it with its scoring pool. For the
guarantees that hang on how each database serializes writers (the login throttle, unique names)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from app.config import Settings
from app.main import create_app
from app.storage.db import Database, scratch_database
from app.storage.migrate import upgrade


@contextmanager
def _url(kind: str, folder: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'podium.sqlite3'}"
        return
    server = os.environ.get("PODIUM_TEST_DATABASE_URL")
    if not server:
        pytest.skip("PostgreSQL: set PODIUM_TEST_DATABASE_URL to a server's database (as .ci/run does)")
    with scratch_database(server, make_url(server).database or "podium_test") as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def each_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A migrated database of each kind, for this test alone."""
    with _url(request.param, tmp_path) as url:
        database = Database(url)
        try:
            upgrade(database.engine)
            yield database
        finally:
            database.dispose()


@contextmanager
def app_on(database: Database, folder: Path) -> Iterator[TestClient]:
    """A client of the real app (embedded pool running) on ``database``."""
    settings = Settings(database_url=database.url, workers=1, data_dir=folder, lease_seconds=30)
    with TestClient(create_app(settings)) as client:
        yield client
