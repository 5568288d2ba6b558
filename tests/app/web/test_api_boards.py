"""The JSON API reads leaderboards through the application's one leaderboard cache, as the pages do:
each snapshot is ranked once and its answer made once, and a reveal is answered through the cache."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import update

from app.services.boards.cache import BoardCache
from app.storage.db import Database
from app.storage.models import Score
from tests.app.builders import HALF, phase_spec
from tests.app.web.test_api import PHASE, auth, entries, setup, upload, wait


def boards(client: TestClient) -> BoardCache:
    cache: BoardCache = client.app.state.podium.boards  # type: ignore[attr-defined]
    return cache


def test_the_api_answers_from_the_cached_snapshot(db: Database, client: TestClient) -> None:
    setup(db)
    upload(client, auth(db, "ada"), HALF)
    wait(client)
    assert entries(client) == [(1, "ada", 0.5)]
    (snapshot,) = boards(client).snapshots()
    assert snapshot.viewers == "public" and snapshot.peek("api") is not None
    # A change that neither this process's commits nor the phase's fingerprint show (a score edited
    # by hand in the database): the answer is still the cached one, so nothing was ranked again.
    with db.engine.begin() as connection:
        connection.execute(update(Score).values(metrics={"accuracy": 0.9}))
    assert entries(client) == [(1, "ada", 0.5)]
    assert list(boards(client).snapshots()) == [snapshot]


def test_a_reveal_is_answered_through_the_cache(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(visibility="hidden"))
    upload(client, auth(db, "ada"), HALF)
    wait(client)
    hidden = client.get(f"{PHASE}/leaderboard").json()
    assert (hidden["hidden"], hidden["entries"]) == (True, [])
    revealed = client.post(f"{PHASE}/reveal", headers=auth(db, "olga")).json()
    assert (revealed["hidden"], [e["team"] for e in revealed["entries"]]) == (False, ["ada"])
    public = [s for s in boards(client).snapshots() if s.viewers == "public"]
    assert len(public) == 1 and not public[0].hidden
    assert client.get(f"{PHASE}/leaderboard").json() == revealed  # the same snapshot's answer
