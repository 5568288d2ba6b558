"""Organizers delete a phase's submissions (every one, or a team's) and whole competitions, through the API, the
pages (which ask first) and the command line: what a revealed board's final ranking shows is kept, deleted
submissions still count against the limits, usage drops, and after a collector pass the disk store holds no file
that nothing refers to."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from typer.testing import CliRunner

from app.cli import app as cli
from app.config import Settings
from app.main import create_app
from app.services.accounts import users
from app.services.competitions.removal import delete_competition
from app.storage import collect
from app.storage.db import Database
from app.storage.models import Base, Blob, DeletedSubmission, Submission, User
from app.storage.stores import BlobStores, DiskStore
from tests.app.builders import HALF, PERFECT, as_bytes, bundle_file, make_competition, make_user, phase_spec
from tests.app.labels_scorer import LabelScorer
from tests.app.test_cli_baselines import server  # noqa: F401 (the fixture)
from tests.app.web import test_pages as pages
from tests.app.web.test_api import PHASE, auth, entries, setup, upload, wait

USAGE = "/api/v1/competitions/comp/usage"
COMPETITION = "/api/v1/competitions/comp"
COMP_GOLD = bundle_file("gold.json", as_bytes({"a": "x", "b": "x", "c": "y", "d": "y"}))
OTHER_GOLD = bundle_file("gold.json", as_bytes({"a": "y", "b": "x", "c": "x", "d": "y"}))


@pytest.fixture
def settings(db: Database, tmp_path: Path) -> Settings:
    return Settings(database_url=db.url, workers=1, data_dir=tmp_path, blob_store="disk", blob_dir=tmp_path / "blobs")


@pytest.fixture
def client(settings: Settings, labels: type[LabelScorer]) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def _count(db: Database, model: Any, *where: Any) -> int:
    with db.session(read_only=True) as session:
        return session.scalar(select(func.count()).select_from(model).where(*where)) or 0


def _files(settings: Settings) -> set[str]:
    assert settings.blob_dir is not None
    return {p.name for p in settings.blob_dir.rglob("*") if p.is_file()}


def test_an_organizer_deletes_a_teams_submissions_then_every_one(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(total_limit=3))
    ada, bob, olga = auth(db, "ada"), auth(db, "bob"), auth(db, "olga")
    for run in (HALF, PERFECT):
        assert upload(client, ada, run).status_code == 202
    assert upload(client, bob, HALF).status_code == 202
    wait(client)
    assert client.get(USAGE, headers=olga).json()["uploaded"]["files"] == 3

    # Participants, and anyone who does not organize the competition, are refused before anything goes.
    for headers in (ada, bob):
        refused = client.delete(f"{PHASE}/submissions", headers=headers)
        assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")
    assert client.delete(f"{PHASE}/submissions").status_code == 401
    missing = client.delete(f"{PHASE}/submissions", headers=olga, params={"team": "nobody"})
    assert (missing.status_code, missing.json()["error"]) == (404, "no_such_team")
    assert "there is no team named 'nobody'" in missing.json()["detail"]
    assert _count(db, Submission) == 3

    answer = client.delete(f"{PHASE}/submissions", headers=olga, params={"team": "ADA"})  # names compare as names do
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"deleted": 2, "kept_for_record": [], "busy": []}
    assert entries(client) == [(1, "bob", 0.5)]
    usage = client.get(USAGE, headers=olga).json()
    assert usage["uploaded"] == {"files": 1, "bytes": len(as_bytes(HALF))}
    assert [t["name"] for t in usage["teams"]] == ["bob"]
    # What was deleted still counts against ada's total of 3: one more upload, then none.
    assert upload(client, ada, HALF).status_code == 202
    refused = upload(client, ada, HALF)
    assert (refused.status_code, refused.json()["error"]) == (429, "quota_exhausted")
    wait(client)

    everything = client.delete(f"{PHASE}/submissions", headers=olga)
    assert everything.json() == {"deleted": 2, "kept_for_record": [], "busy": []}
    assert _count(db, Submission) == 0
    assert _count(db, DeletedSubmission) == 4
    assert entries(client) == []
    assert client.get(USAGE, headers=olga).json()["uploaded"] == {"files": 0, "bytes": 0}


def test_a_revealed_boards_final_ranking_and_a_run_being_scored_are_kept(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(visibility="hidden"))
    ada, bob, olga = auth(db, "ada"), auth(db, "bob"), auth(db, "olga")
    half = upload(client, ada, HALF).json()["id"]
    perfect = upload(client, ada, PERFECT).json()["id"]
    bobs = upload(client, bob, HALF).json()["id"]
    bobs_best = upload(client, bob, PERFECT).json()["id"]
    wait(client)
    assert client.post(f"{PHASE}/reveal", headers=olga).status_code == 200
    ranking = entries(client)
    with db.session() as session:
        row = session.get(Submission, bobs)
        assert row is not None
        row.status = "running"  # a worker holds it
        session.commit()

    answer = client.delete(f"{PHASE}/submissions", headers=olga)
    assert answer.json() == {"deleted": 1, "kept_for_record": [perfect, bobs_best], "busy": [bobs]}
    assert _count(db, Submission) == 3 and _count(db, Submission, Submission.id == half) == 0
    assert entries(client) == ranking


def test_an_organizer_deletes_a_competition_and_the_collector_frees_its_files(
    db: Database, client: TestClient, settings: Settings
) -> None:
    setup(db, phase_spec(gold=COMP_GOLD))
    with db.session() as session:
        make_user(session, "oscar", organizer=True)
        # Another competition with its own gold and the same inputs' and training files, stored once for both.
        make_competition(session, "other", organizers=("oscar",), phases=(phase_spec(gold=OTHER_GOLD),))
        session.commit()
    ada, bob, olga, oscar = auth(db, "ada"), auth(db, "bob"), auth(db, "olga"), auth(db, "oscar")
    upload(client, ada, PERFECT)
    upload(client, bob, HALF)
    wait(client)
    assert settings.blob_dir is not None
    bobs_file = DiskStore(settings.blob_dir).path(hashlib.sha256(as_bytes(HALF)).hexdigest())
    assert bobs_file.is_file()
    other_blobs = {OTHER_GOLD.sha256, phase_spec().public_files[0].sha256}

    for headers in (ada, oscar):  # a participant, another competition's organizer
        refused = client.delete(COMPETITION, headers=headers)
        assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")
    assert client.delete(COMPETITION).status_code == 401
    assert client.delete("/api/v1/competitions/nothing", headers=olga).status_code == 404

    # A worker queue of the competition, with a credential that works until the competition goes.
    assert client.post(f"{COMPETITION}/queues", headers=olga, json={"name": "lab"}).status_code == 201
    issued = client.post(f"{COMPETITION}/queues/lab/credentials", headers=olga, json={"label": "box"})
    worker = {"Authorization": f"Bearer {issued.json()['credential']}"}
    assert client.post("/api/v1/worker/claim", headers=worker, json={}).status_code == 200

    answer = client.delete(COMPETITION, headers=olga)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"competition": "comp", "phases": 1, "submissions": 2, "teams": 2}
    assert client.post("/api/v1/worker/claim", headers=worker, json={}).status_code == 401
    assert client.get(COMPETITION).status_code == 404
    assert client.get(f"{PHASE}/leaderboard").status_code == 404
    assert client.get(USAGE, headers=olga).status_code == 404
    assert [c["slug"] for c in client.get("/api/v1/competitions").json()["competitions"]] == ["other"]
    # Nothing of it is left in any table; the accounts stay.
    with db.session(read_only=True) as session:
        assert session.scalar(select(func.count(User.id))) == 4
    others = ("tasks", "phases", "competition_organizers")  # the other competition's
    for table in (*others, "teams", "team_members", "submissions", "scores", "worker_queues", "worker_credentials"):
        assert _count_table(db, table) == (1 if table in others else 0), table

    # The collector removes the files only the competition named; the other competition's stay.
    stores = Database(db.url, blobs=BlobStores.from_settings(settings))
    try:
        removed = collect.collect(stores, grace=timedelta(0))
    finally:
        stores.dispose()
    # Its gold and bob's file; ada's is the training file byte for byte, which the other competition has too.
    assert removed == collect.Collected(2, len(COMP_GOLD.data) + len(as_bytes(HALF)))
    with db.session(read_only=True) as session:
        stored = {b.sha256: b.store for b in session.scalars(select(Blob))}
    assert other_blobs <= set(stored)
    assert not bobs_file.exists()  # the disk store holds no file that no row names
    on_disk = {sha for sha, store in stored.items() if store == "disk"}
    assert _files(settings) == {DiskStore(settings.blob_dir).path(sha).name for sha in on_disk}


def test_an_upload_racing_the_deletion_of_its_competition_is_told_it_is_gone(db: Database, client: TestClient) -> None:
    setup(db)
    ada = auth(db, "ada")
    upload(client, ada, HALF)
    wait(client)
    answers: list[Any] = []
    deleter = db.session()
    try:
        delete_competition(deleter, users.find_user(deleter, "olga"), "comp")
        deleter.flush()
        racer = threading.Thread(target=lambda: answers.append(upload(client, ada, PERFECT)))
        racer.start()
        racer.join(1.0)  # it waits for the deletion's transaction (the phase's row, or SQLite's write lock)
        deleter.commit()
    finally:
        deleter.close()
    racer.join()
    # Told the phase was deleted, or that there is no competition (SQLite: the upload waits for the write lock at once)
    assert (answers[0].status_code, answers[0].json()["error"]) == (404, "not_found"), answers[0].text
    assert _count(db, Submission) == 0


def _count_table(db: Database, name: str) -> int:
    table = Base.metadata.tables[name]
    with db.engine.connect() as connection:
        return connection.execute(select(func.count()).select_from(table)).scalar_one()


def test_a_competition_a_worker_is_scoring_is_not_deleted(db: Database, client: TestClient) -> None:
    setup(db)
    ada, olga = auth(db, "ada"), auth(db, "olga")
    submission_id = upload(client, ada, HALF).json()["id"]
    wait(client)
    with db.session() as session:
        row = session.get(Submission, submission_id)
        assert row is not None
        row.status = "running"
        session.commit()
    busy = client.delete(COMPETITION, headers=olga)
    assert (busy.status_code, busy.json()["error"]) == (409, "competition_busy")
    assert f"a worker is running submission {submission_id} of 'comp'" in busy.json()["detail"]
    assert client.get(COMPETITION).status_code == 200


def test_the_organize_pages_ask_before_deleting(db: Database, client: TestClient) -> None:
    pages.setup(db, "ada")
    pages.login(client, "ada")
    pages.submit(client, HALF)
    wait(client)
    pages.login(client, "olga")
    organize = client.get(f"{pages.BOARD}/organize")
    assert 'action="/c/comp/labels/dev/organize/delete-submissions"' in organize.text
    asked = client.post(
        f"{pages.BOARD}/organize/delete-submissions", data={"csrf_token": pages.token(organize), "team": "ada"}
    )
    missing = client.post(
        f"{pages.BOARD}/organize/delete-submissions", data={"csrf_token": pages.token(organize), "team": "nobody"}
    )
    assert missing.status_code == 404 and "there is no team named" in missing.text  # said before asking
    assert asked.status_code == 200 and "Delete team ada&#39;s submissions to Phase dev?" in asked.text
    assert '<input type="hidden" name="team" value="ada">' in asked.text
    assert _count(db, Submission) == 1
    done = client.post(
        f"{pages.BOARD}/organize/delete-submissions",
        data={"csrf_token": pages.token(asked), "team": "ada", "confirmed": "yes"},
    )
    assert done.status_code == 200 and "1 submission(s) deleted." in done.text
    assert _count(db, Submission) == 0

    page = client.get("/c/comp/organize")
    assert 'action="/c/comp/organize/delete"' in page.text
    asked = client.post("/c/comp/organize/delete", data={"csrf_token": pages.token(page)})
    assert asked.status_code == 200 and "Delete the competition" in asked.text
    assert client.get("/c/comp").status_code == 200
    done = client.post("/c/comp/organize/delete", data={"csrf_token": pages.token(asked), "confirmed": "yes"})
    assert done.status_code == 200 and "The competition comp is deleted" in done.text
    assert client.get("/c/comp").status_code == 404


def test_organizers_delete_from_the_command_line(
    db: Database,
    settings: Settings,
    server: str,  # noqa: F811
    labels: Any,
) -> None:
    setup(db)
    ada, olga = auth(db, "ada"), auth(db, "olga")
    with TestClient(create_app(settings)) as client:
        upload(client, ada, HALF)
        wait(client)
    args = ("--server", server, "--yes")
    ada_token = ada["Authorization"].removeprefix("Bearer ")
    olga_token = olga["Authorization"].removeprefix("Bearer ")
    where = "comp/labels/dev"

    refused = CliRunner().invoke(cli, ["delete-submissions", where, *args, "--token", ada_token])
    assert refused.exit_code == 2 and "refused (403 forbidden)" in refused.stderr
    bad = CliRunner().invoke(cli, ["delete-submissions", "comp/labels", *args, "--token", olga_token])
    assert (bad.exit_code, bad.stderr) == (2, "expected COMPETITION/TASK/PHASE, got 'comp/labels'\n")
    deleted = CliRunner().invoke(cli, ["delete-submissions", where, *args, "--token", olga_token, "--team", "ada"])
    assert (deleted.exit_code, deleted.stdout) == (0, "1 submission(s) deleted\n")

    refused = CliRunner().invoke(cli, ["delete-competition", "comp", *args, "--token", ada_token])
    assert refused.exit_code == 2 and "only the organizers of 'comp' may do this" in refused.stderr
    gone = CliRunner().invoke(cli, ["delete-competition", "comp", *args, "--token", olga_token])
    assert (gone.exit_code, gone.stdout) == (0, "competition comp is deleted: 1 phase(s), 0 submission(s), 1 team(s)\n")
    again = CliRunner().invoke(cli, ["delete-competition", "comp", *args, "--token", olga_token])
    assert again.exit_code == 2 and "404" in again.stderr
