"""Storage usage of a competition: files and bytes per team, per uploader and in all, for its organizers and
site admins (the API and the organizers' page), refused to everyone else."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.storage.db import Database
from app.storage.models import Blob
from tests.app.builders import HALF, PERFECT, as_bytes
from tests.app.web.test_api import PHASE, auth, setup, wait
from tests.app.web.test_pages import login

USAGE = "/api/v1/competitions/comp/usage"


def test_organizers_read_what_each_team_and_uploader_stores(db: Database, client: TestClient) -> None:
    setup(db)
    ada, bob, olga = auth(db, "ada"), auth(db, "bob"), auth(db, "olga")
    half, perfect = as_bytes(HALF), as_bytes(PERFECT)
    for headers, data in ((ada, half), (ada, perfect), (bob, half)):
        answer = client.post(f"{PHASE}/submissions", headers=headers, files={"file": ("run.json", data)})
        assert answer.status_code == 202, answer.text
    wait(client)
    with db.session(read_only=True) as session:
        every_blob = session.execute(select(func.count(), func.sum(Blob.size))).one()

    usage = client.get(USAGE, headers=olga)
    assert usage.status_code == 200, usage.text
    body = usage.json()
    assert body["uploaded"] == {"files": 3, "bytes": 2 * len(half) + len(perfect)}
    # ada's team sent the most; bob's file is the same contents as one of ada's, stored once.
    assert [(t["files"], t["bytes"]) for t in body["teams"]] == [(2, len(half) + len(perfect)), (1, len(half))]
    assert [(u["name"], u["files"]) for u in body["users"]] == [("ada", 2), ("bob", 1)]
    # Stored: the competition's own files and the two distinct submitted contents, each once: every blob here.
    assert body["stored"] == {"files": every_blob[0], "bytes": every_blob[1]}
    assert body["competition_files"]["files"] < body["stored"]["files"]

    assert client.get(USAGE, headers=ada).status_code == 403
    assert client.get(USAGE).status_code == 401
    assert client.get("/api/v1/competitions/nowhere/usage", headers=olga).status_code == 404

    login(client, "olga")
    page = client.get("/c/comp/organize")
    assert page.status_code == 200
    assert 'id="storage"' in page.text and f'<td class="num">{len(half) + len(perfect)}</td>' in page.text
    assert f"{body['stored']['files']} files" in page.text
