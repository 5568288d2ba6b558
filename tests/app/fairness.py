"""Two competitions sharing one worker, for the tests of the fair order in both modes: ``alpha``, where
``ada`` floods the queue and ``bob`` sends one, and ``beta``, where ``cleo`` sends one."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.services.accounts import users
from app.storage.db import Database
from app.storage.models import Submission
from tests.app.builders import HALF, as_bytes, make_competition, make_user

NAMES = ("ada", "bob", "cleo")


def phase(competition: str) -> str:
    return f"/api/v1/competitions/{competition}/tasks/labels/phases/dev"


def competitions(db: Database, **task: Any) -> dict[str, dict[str, str]]:
    """Users ``olga`` (organizer of both), ``ada``, ``bob`` and ``cleo``, and the competitions ``alpha`` and
    ``beta`` (``task``: their scorer and its options); returns each participant's auth header."""
    heads = {}
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        for name in NAMES:
            user = make_user(session, name)
            heads[name] = {"Authorization": f"Bearer {users.issue_token(session, user)}"}
        for slug in ("alpha", "beta"):
            make_competition(session, slug, organizers=("olga",), **task)
        session.commit()
    return heads


def send(client: TestClient, heads: dict[str, dict[str, str]], name: str, competition: str) -> int:
    files = {"file": ("run.json", as_bytes(HALF), "application/json")}
    answer = client.post(f"{phase(competition)}/submissions", headers=heads[name], files=files)
    assert answer.status_code == 202, answer.text
    return int(answer.json()["id"])


def flood(client: TestClient, heads: dict[str, dict[str, str]], floods: int = 4) -> dict[int, str]:
    """``ada`` sends ``floods`` submissions to ``alpha``, then ``bob`` one to ``alpha`` and ``cleo`` one to
    ``beta``; returns who sent each (in the order they were sent)."""
    sent = {send(client, heads, "ada", "alpha"): "ada" for _ in range(floods)}
    sent[send(client, heads, "bob", "alpha")] = "bob"
    sent[send(client, heads, "cleo", "beta")] = "cleo"
    return sent


#: The order ``flood`` is taken in by one worker: alpha's first, then beta's (not served yet), then alpha's
#: other team, then the rest of ada's.
FAIR = ["ada", "cleo", "bob", "ada", "ada", "ada"]
#: The places shown for ``flood``'s submissions, in the order they were sent.
PLACES = [1, 4, 5, 6, 3, 2]


def places(client: TestClient, heads: dict[str, dict[str, str]], sent: dict[int, str]) -> list[int]:
    """The place each submission's sender is shown, in the order they were sent."""
    return [
        client.get(f"/api/v1/submissions/{row_id}", headers=heads[name]).json()["queue_position"]
        for row_id, name in sent.items()
    ]


def starts(db: Database, ids: list[int]) -> dict[int, datetime]:
    """When each submission's scoring started (its claim)."""
    with db.session(read_only=True) as session:
        rows = session.execute(select(Submission.id, Submission.started_at).where(Submission.id.in_(ids))).all()
    found = {row_id: started for row_id, started in rows if started is not None}
    assert len(found) == len(ids), "every submission was started"
    return found


def taken_order(db: Database, sent: dict[int, str]) -> list[str]:
    """Who sent each submission, in the order a worker took them."""
    started = starts(db, list(sent))
    return [sent[row_id] for row_id in sorted(sent, key=started.__getitem__)]
