"""Fixtures of the application's tests: a database built by the migrations, and the test scorer.

The database is SQLite in a temporary folder, or, when ``PODIUM_TEST_DATABASE_URL`` names a
PostgreSQL server, a fresh database created on it for this test session and dropped afterwards.
Each test starts from empty tables.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from app.config import Settings
from app.main import create_app
from app.storage.db import Database, scratch_database
from app.storage.migrate import upgrade
from app.storage.models import Base
from scorers import register, unregister
from tests.app.labels_baselines import LabelsCopy, registered
from tests.app.labels_scorer import LabelScorer


def _postgres_database(server_url: str) -> Iterator[str]:
    with scratch_database(server_url, make_url(server_url).database or "podium_test") as url:
        yield url


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = os.environ.get("PODIUM_TEST_DATABASE_URL")
    if server:
        yield from _postgres_database(server)
    else:
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'podium.sqlite3'}"


@pytest.fixture(scope="session")
def migrated(database_url: str) -> Iterator[Database]:
    database = Database(database_url)
    upgrade(database.engine)
    yield database
    database.dispose()


@pytest.fixture
def db(migrated: Database) -> Iterator[Database]:
    """The migrated test database, emptied after the test."""
    yield migrated
    with migrated.engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())


@pytest.fixture
def labels() -> Iterator[type[LabelScorer]]:
    """The test scorer, registered for the duration of one test."""
    register(LabelScorer)
    yield LabelScorer
    unregister(LabelScorer.name)


@pytest.fixture
def system(labels: type[LabelScorer]) -> Iterator[type[LabelsCopy]]:
    """The test baseline system (it copies the labels' gold), registered for one test."""
    with registered() as cls:
        yield cls


@pytest.fixture
def settings(db: Database, tmp_path: Path) -> Settings:
    return Settings(database_url=db.url, workers=1, data_dir=tmp_path, lease_seconds=30)


@pytest.fixture
def client(settings: Settings, labels: type[LabelScorer]) -> Iterator[TestClient]:
    """A client of the app with its embedded scoring pool running."""
    with TestClient(create_app(settings)) as test_client:
        yield test_client
