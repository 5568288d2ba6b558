"""Code runs take turns too: two code competitions share the ``gpu`` lane's one thread, the programs of a
competition flooding it do not keep another competition's program waiting (the sandbox is real), and each
team is shown its program's place in that order."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import Settings
from app.main import create_app
from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.storage.db import Database
from app.storage.models import CodeRun, Submission
from tests.app.builders import make_user
from tests.app.test_code_runs import ALL_ZERO, EXAMPLE, program
from tests.app.web.test_api import auth

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here")

SLOW_PROGRAM = program("import time\ntime.sleep(0.3)\n" + ALL_ZERO)


def code_competitions(db: Database) -> None:
    """The code example as two competitions, ``code-alpha`` and ``code-beta``, with no upload limit."""
    spec = load_bundle(EXAMPLE)
    task = spec.tasks[0]
    phase = replace(task.phases[0], total_limit=None, daily_limit=None)
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        for name in ("ada", "bob", "cleo"):
            make_user(session, name)
        for slug in ("code-alpha", "code-beta"):
            one = replace(spec, slug=slug, organizers=("olga",), tasks=(replace(task, phases=(phase,)),))
            catalog.create_competition(session, one)
        session.commit()


def send(client: TestClient, db: Database, name: str, competition: str) -> int:
    files = {"file": ("program.zip", SLOW_PROGRAM, "application/zip")}
    path = f"/api/v1/competitions/{competition}/tasks/detection/phases/test/submissions"
    answer = client.post(path, headers=auth(db, name), files=files)
    assert answer.status_code == 202, answer.text
    return int(answer.json()["id"])


def test_a_competition_flooding_the_gpu_lane_takes_turns_with_another(db: Database) -> None:
    code_competitions(db)
    with TestClient(create_app(Settings(database_url=db.url, workers=0))) as idle:  # nothing runs yet
        sent = {send(idle, db, "ada", "code-alpha"): "ada" for _ in range(3)}
        sent[send(idle, db, "bob", "code-alpha")] = "bob"
        sent[send(idle, db, "cleo", "code-beta")] = "cleo"
        shown = [
            idle.get(f"/api/v1/submissions/{submission}", headers=auth(db, name)).json()
            for submission, name in sent.items()
        ]
    # Each program's place in the gpu queue while it waits: ada's three, bob's, cleo's as they were sent.
    assert [(s["status"], s["queue_position"], s["estimated_scored_at"]) for s in shown] == [
        ("awaiting_run", place, None) for place in (1, 4, 5, 3, 2)
    ]
    with TestClient(create_app(Settings(database_url=db.url, workers=1))) as client:
        assert client.app.state.podium.queue.wait_idle(120)  # type: ignore[attr-defined]
        done = client.get(f"/api/v1/submissions/{next(iter(sent))}", headers=auth(db, "ada")).json()
    assert (done["status"], done["queue_position"]) == ("scored", None)
    with db.session(read_only=True) as session:
        runs = session.execute(select(CodeRun.submission_id, CodeRun.started_at, CodeRun.attempts)).all()
        statuses = set(session.scalars(select(Submission.status)))
    assert statuses == {"scored"}
    assert {attempts for *_, attempts in runs} == {1}  # each program ran once
    order = [sent[submission] for submission, _, _ in sorted(runs, key=lambda run: run[1])]
    # First come first served would run ada's three, then bob's, then cleo's.
    assert order == ["ada", "cleo", "bob", "ada", "ada"]
