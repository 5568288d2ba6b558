"""Removing what nothing refers to: a deleted submission's file goes from its store (row and contents) through
``podium storage collect`` and the sweeper, what is still referred to or too young stays, and an upload of the
same contents while the collector runs keeps its contents, whichever of the two takes the blob's row first."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner

from app.cli import app as cli
from app.config import Settings
from app.main import create_app
from app.storage import collect
from app.storage.blobs import put_blob, read_blob
from app.storage.db import Database
from app.storage.models import Blob, Phase, Submission, Team
from app.storage.stores import BlobStores, DiskStore
from app.worker.sweeper import Sweeper
from tests.app.builders import HALF, PERFECT, as_bytes
from tests.app.labels_scorer import LabelScorer
from tests.app.web.test_api import PHASE, auth, setup, upload, wait


@pytest.fixture
def settings(db: Database, tmp_path: Path) -> Settings:
    return Settings(database_url=db.url, workers=1, data_dir=tmp_path, blob_store="disk", blob_dir=tmp_path / "blobs")


@pytest.fixture
def client(settings: Settings, labels: type[LabelScorer]) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client


@pytest.fixture
def stores_db(db: Database, settings: Settings) -> Iterator[Database]:
    database = Database(db.url, blobs=BlobStores.from_settings(settings))
    yield database
    database.dispose()


def _blob_of(db: Database, submission_id: int) -> tuple[int, str]:
    with db.session(read_only=True) as session:
        row = session.execute(
            select(Blob.id, Blob.sha256)
            .join(Submission, Submission.blob_id == Blob.id)
            .where(Submission.id == submission_id)
        ).one()
        return row.id, row.sha256


def _deleted_upload(client: TestClient, db: Database, settings: Settings, run: object) -> tuple[int, Path]:
    """A submission of ``run`` made and deleted by ada: its blob's id and the disk file of its contents."""
    ada = auth(db, "ada")
    submission_id = upload(client, ada, run).json()["id"]
    wait(client)
    blob_id, digest = _blob_of(db, submission_id)
    assert client.delete(f"/api/v1/submissions/{submission_id}", headers=ada).status_code == 204
    assert settings.blob_dir is not None
    return blob_id, DiskStore(settings.blob_dir).path(digest)


def test_podium_storage_collect_removes_what_nothing_refers_to(
    db: Database, client: TestClient, settings: Settings, stores_db: Database
) -> None:
    setup(db)
    kept = upload(client, auth(db, "bob"), PERFECT).json()["id"]
    gone, file = _deleted_upload(client, db, settings, HALF)
    kept_blob = _blob_of(db, kept)[0]
    assert file.is_file()
    # Too young for the default grace period: kept.
    assert collect.collect(stores_db) == collect.Collected(0, 0)
    assert file.is_file()

    env = {"PODIUM_DATABASE_URL": db.url, "PODIUM_BLOB_DIR": str(settings.blob_dir)}
    answer = CliRunner().invoke(cli, ["storage", "collect", "--grace-seconds", "0"], env=env)
    assert answer.exit_code == 0, answer.output
    assert f"removed 1 files ({len(as_bytes(HALF))} bytes)" in answer.output
    assert not file.is_file()
    with stores_db.session(read_only=True) as session:
        assert session.get(Blob, gone) is None
        # What is still referred to stays: bob's file, the competition's gold and files.
        assert read_blob(session, kept_blob) == as_bytes(PERFECT)
    assert collect.collect(stores_db, grace=timedelta(0)) == collect.Collected(0, 0)
    refused = CliRunner().invoke(cli, ["storage", "collect", "--grace-seconds", "-1"], env=env)
    assert refused.exit_code == 2


def test_the_sweeper_collects_once_an_interval(db: Database, client: TestClient, settings: Settings) -> None:
    setup(db)
    _, file = _deleted_upload(client, db, settings, HALF)
    sweeper = Sweeper(client.app.state.podium.db, lambda *_: True, settings)  # type: ignore[attr-defined]
    assert sweeper.collect_if_due() is None  # not an interval since it started
    removed = sweeper.collect_if_due(every=0)
    assert removed is not None and removed.files == 0  # the file is younger than the grace period
    assert file.is_file()


def test_an_upload_of_the_same_contents_while_the_collector_removes_them_stores_them_again(
    db: Database, client: TestClient, settings: Settings, stores_db: Database
) -> None:
    setup(db)
    blob_id, file = _deleted_upload(client, db, settings, HALF)
    bob = auth(db, "bob")
    answers: list[int] = []
    collector = stores_db.session()
    try:
        assert collect._collect_one(collector, blob_id) == len(as_bytes(HALF))  # row deleted, contents removed
        assert not file.is_file()
        racer = threading.Thread(target=lambda: answers.append(upload(client, bob, HALF).status_code))
        racer.start()
        racer.join(0.5)  # it waits for the collector's transaction (the blob's row, or SQLite's write lock)
        collector.commit()
    finally:
        collector.close()
    racer.join()
    assert answers == [202]
    wait(client)
    listed = client.get(f"{PHASE}/submissions", headers=bob).json()["submissions"]
    assert [s["status"] for s in listed] == ["scored"]  # its contents were read back to score it
    assert file.is_file()
    with stores_db.session(read_only=True) as session:
        assert read_blob(session, _blob_of(db, listed[0]["id"])[0]) == as_bytes(HALF)


def test_a_collector_that_comes_while_an_upload_refers_to_the_contents_keeps_them(
    db: Database, client: TestClient, settings: Settings, stores_db: Database
) -> None:
    setup(db)
    blob_id, file = _deleted_upload(client, db, settings, HALF)
    outcome: list[int | None] = []
    with stores_db.session(read_only=True) as session:
        phase_id, team_id = session.scalar(select(Phase.id)), session.scalar(select(Team.id))
    uploader = stores_db.session()
    try:
        reused = put_blob(uploader, as_bytes(HALF))  # the upload found the row and holds it
        assert reused.id == blob_id
        collecting = threading.Thread(target=lambda: outcome.append(_collect_in_own_transaction(stores_db, blob_id)))
        collecting.start()
        collecting.join(0.5)
        uploader.add(
            Submission(
                phase_id=phase_id,
                team_id=team_id,
                blob_id=blob_id,
                sha256=reused.sha256,
                size=reused.size,
                original_name="run.json",
            )
        )
        uploader.commit()
    finally:
        uploader.close()
    collecting.join()
    assert outcome == [None]  # kept: the upload's submission refers to it
    assert file.is_file()
    with stores_db.session(read_only=True) as session:
        assert read_blob(session, blob_id) == as_bytes(HALF)


def _collect_in_own_transaction(database: Database, blob_id: int) -> int | None:
    with database.session() as session:
        removed = collect._collect_one(session, blob_id)
        session.commit()
        return removed


def test_each_store_loses_the_contents_of_a_collected_blob(store_db: Database) -> None:
    with store_db.session() as session:
        blob = put_blob(session, b"nothing refers to this")
        session.commit()
        where, digest = blob.store, blob.sha256
    assert collect.collect(store_db, grace=timedelta(0)) == collect.Collected(1, len(b"nothing refers to this"))
    with store_db.session(read_only=True) as session:
        assert session.get(Blob, blob.id) is None
        with pytest.raises(LookupError):
            store_db.blobs.get(where).open(session, digest)
