"""Files through the API, in the embedded default: an upload hashed as it arrived, kept once in the disk
store's folder beside the SQLite database (not in the database) and scored by the embedded pool from there;
a public file streamed from the store to its downloader."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import select, update
from sqlalchemy.engine import make_url

from app.storage.blobs import put_blob
from app.storage.db import Database
from app.storage.enums import StoreName
from app.storage.models import Blob, PhaseFile, Submission
from tests.app.builders import HALF, as_bytes
from tests.app.web.test_api import PHASE, auth, setup, wait


def test_an_upload_is_kept_once_in_the_folder_and_scored_from_there(db: Database, client: TestClient) -> None:
    setup(db)
    ada = auth(db, "ada")
    data = as_bytes(HALF)
    for _ in range(2):
        answer = client.post(f"{PHASE}/submissions", headers=ada, files={"file": ("run.json", data)})
        assert answer.status_code == 202, answer.text
        assert answer.json()["sha256"] == hashlib.sha256(data).hexdigest()
    wait(client)
    with db.session(read_only=True) as session:
        submissions = session.scalars(select(Submission)).all()
        blob = session.get(Blob, submissions[0].blob_id)
        assert blob is not None
        kept = session.scalar(select(Blob.data).where(Blob.id == blob.id))
    assert [s.status for s in submissions] == ["scored", "scored"]
    assert {s.blob_id for s in submissions} == {blob.id}  # the same file twice is stored once
    assert (blob.store, kept) == (StoreName.DISK, None)
    if db.is_sqlite:  # the default folder: beside the database
        folder = Path(make_url(db.url).database or "").parent / "blobs"
        assert (folder / blob.sha256[:2] / blob.sha256[2:4] / blob.sha256).read_bytes() == data


def test_a_public_file_is_streamed_from_the_store_with_its_length(db: Database, client: TestClient) -> None:
    setup(db)
    data = os.urandom(3 * 1024 * 1024 + 5)  # several chunks
    served = client.app.state.podium.db  # type: ignore[attr-defined]
    with served.session() as session:
        blob = put_blob(session, data)
        session.execute(update(PhaseFile).where(PhaseFile.name == "inputs.txt").values(blob_id=blob.id))
        session.commit()
    assert blob.store == StoreName.DISK
    answer = client.get(f"{PHASE}/files/inputs.txt")
    assert (answer.status_code, answer.headers["content-length"]) == (200, str(len(data)))
    assert answer.content == data and 'filename="inputs.txt"' in answer.headers["content-disposition"]
