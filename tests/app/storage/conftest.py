"""Fixtures of the blob store tests: a real S3-protocol server (moto's, ``tests/app/s3server.py``) for the
session, and each store on the test database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.storage.db import Database
from app.storage.enums import StoreName
from app.storage.stores import BlobStores
from tests.app.s3server import S3Server, s3_server  # noqa: F401 (the session's fixture)


@pytest.fixture
def s3_bucket(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh bucket, the AWS variables pointing at the test server."""
    server: S3Server = request.getfixturevalue("s3_server")
    for name, value in server.environment().items():
        monkeypatch.setenv(name, value)
    return server.new_bucket()


def stores_for(name: StoreName, request: pytest.FixtureRequest, folder: Path) -> BlobStores:
    """Stores writing to ``name``; the disk store is always configured (in ``folder``), s3 only when used."""
    bucket = request.getfixturevalue("s3_bucket") if name == StoreName.S3 else ""
    return BlobStores(name, disk_root=folder / "blobs", s3_bucket=bucket)


@pytest.fixture(params=list(StoreName))
def store_db(request: pytest.FixtureRequest, db: Database, tmp_path: Path) -> Iterator[Database]:
    """The test database with each store in turn as the one new blobs go to."""
    database = Database(db.url, blobs=stores_for(StoreName(request.param), request, tmp_path))
    yield database
    database.dispose()
