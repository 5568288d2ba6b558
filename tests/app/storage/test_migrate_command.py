"""``podium storage migrate``: every file moved between stores with its contents intact, resumable after
being killed, and refusing (exit 2, one message) a file whose copy does not hash to its sha256."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner, Result

from app.cli import app
from app.storage.blob_migration import verify_blob
from app.storage.blobs import put_blob, read_blob
from app.storage.db import Database
from app.storage.enums import StoreName
from app.storage.models import Blob
from app.storage.stores import BlobStores
from tests.conftest import ROOT

PODIUM = str(Path(sys.executable).with_name("podium"))


def podium(*args: str, **env: str) -> Result:
    return CliRunner().invoke(app, list(args), env=env)


def settings(db: Database, folder: Path, bucket: str = "") -> dict[str, str]:
    env = {"PODIUM_DATABASE_URL": db.url, "PODIUM_BLOB_DIR": str(folder / "blobs")}
    if bucket:
        env["PODIUM_S3_BUCKET"] = bucket
    return env


def seed(db: Database, count: int, size: int) -> dict[int, bytes]:
    """``count`` files stored the old way, as rows of the database."""
    contents = {}
    with db.session() as session:
        for n in range(count):
            data = os.urandom(size) + n.to_bytes(4, "big")
            contents[put_blob(session, data).id] = data
        session.commit()
    return contents


def where(db: Database) -> dict[str, int]:
    with db.session(read_only=True) as session:
        return dict(session.execute(select(Blob.store, func.count()).group_by(Blob.store)).all())  # type: ignore[arg-type]


def contents_of(database: Database, ids: list[int]) -> dict[int, bytes]:
    with database.session(read_only=True) as session:
        return {blob_id: read_blob(session, blob_id) for blob_id in ids}


def test_files_move_from_the_database_to_disk_to_s3_and_back_unchanged(
    db: Database, tmp_path: Path, s3_bucket: str
) -> None:
    contents = seed(db, 5, 10_000)
    env = settings(db, tmp_path, s3_bucket)
    everywhere = Database(db.url, blobs=BlobStores(StoreName.DB, disk_root=tmp_path / "blobs", s3_bucket=s3_bucket))
    try:
        for target in ("disk", "s3", "db"):
            moved = podium("storage", "migrate", "--to", target, **env)
            assert moved.exit_code == 0, moved.output
            assert moved.output.splitlines()[-1].startswith(f"moved 5 files (50020 bytes) to the {target} store")
            assert where(db) == {target: 5}
            assert contents_of(everywhere, list(contents)) == contents
        with db.session(read_only=True) as session:
            assert session.scalar(select(func.count()).where(Blob.data.is_(None))) == 0  # back in the rows
        again = podium("storage", "migrate", "--to", "db", "--quiet", **env)
        assert again.exit_code == 0 and again.output.startswith("moved 0 files"), again.output
    finally:
        everywhere.dispose()


def test_moving_out_of_the_database_empties_its_rows(db: Database, tmp_path: Path) -> None:
    seed(db, 3, 1000)
    moved = podium("storage", "migrate", "--to", "disk", "--from", "db", **settings(db, tmp_path))
    assert moved.exit_code == 0, moved.output
    with db.session(read_only=True) as session:
        assert session.scalar(select(func.count()).where(Blob.data.is_not(None))) == 0
    assert len([p for p in (tmp_path / "blobs").rglob("*") if p.is_file()]) == 3


def test_a_killed_migration_loses_nothing_and_the_next_run_resumes_it(db: Database, tmp_path: Path) -> None:
    contents = seed(db, 60, 256 * 1024)
    env = {**os.environ, **settings(db, tmp_path), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [PODIUM, "storage", "migrate", "--to", "disk"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    process.send_signal(signal.SIGKILL)
    process.wait()
    process.stdout.close()
    assert first.startswith("moved blob ")
    halfway = where(db)
    assert 0 < halfway.get("disk", 0) < 60 and halfway["db"] == 60 - halfway["disk"]

    resumed = podium("storage", "migrate", "--to", "disk", **settings(db, tmp_path))
    assert resumed.exit_code == 0, resumed.output
    assert resumed.output.splitlines()[-1].startswith(f"moved {halfway['db']} files")
    assert where(db) == {"disk": 60}
    on_disk = Database(db.url, blobs=BlobStores(StoreName.DISK, disk_root=tmp_path / "blobs"))
    try:
        assert all(verify_blob(on_disk, blob_id) for blob_id in contents)
        assert contents_of(on_disk, list(contents)) == contents
    finally:
        on_disk.dispose()


def test_a_file_whose_copy_does_not_verify_is_refused_and_stays_where_it_was(db: Database, tmp_path: Path) -> None:
    on_disk = Database(db.url, blobs=BlobStores(StoreName.DISK, disk_root=tmp_path / "blobs"))
    try:
        with on_disk.session() as session:
            blob = put_blob(session, b"the original contents")
            session.commit()
    finally:
        on_disk.dispose()
    path = tmp_path / "blobs" / blob.sha256[:2] / blob.sha256[2:4] / blob.sha256
    path.write_bytes(b"a damaged copy")
    refused = podium("storage", "migrate", "--to", "db", **settings(db, tmp_path))
    assert refused.exit_code == 2
    assert f"blob {blob.id}:" in refused.output and "it stays in the disk store" in refused.output
    assert "Traceback" not in refused.output
    assert where(db) == {"disk": 1}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--to", "tape"], "--to must be one of db, disk, s3, not 'tape'"),
        (["--to", "disk", "--from", "disk"], "--from and --to name the same store"),
        (["--to", "s3"], "the 's3' store is not configured"),
    ],
)
def test_bad_input_is_refused_with_one_message(db: Database, tmp_path: Path, args: list[str], message: str) -> None:
    refused = podium("storage", "migrate", *args, **settings(db, tmp_path))
    assert refused.exit_code == 2
    assert message in refused.output and "Traceback" not in refused.output
