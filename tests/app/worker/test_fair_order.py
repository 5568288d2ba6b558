"""The fair order in the embedded mode: competitions take turns at the worker, then teams, and the place a
participant is shown is the order the worker takes them in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import Settings
from app.main import create_app
from app.storage.db import Database
from app.storage.models import Submission
from scorers import register, scorer_names, unregister
from tests.app.fairness import FAIR, PLACES, competitions, flood, places, send, starts, taken_order
from tests.app.labels_scorer import LabelScorer
from tests.app.slow_scorer import NAME as SLOW
from tests.app.slow_scorer import SlowScorer


@pytest.fixture
def slow() -> Iterator[type[SlowScorer]]:
    if SLOW not in scorer_names():
        register(SlowScorer)
    yield SlowScorer
    unregister(SLOW)


def test_the_places_shown_are_the_turns_the_worker_takes(db: Database, labels: type[LabelScorer]) -> None:
    heads = competitions(db)
    with TestClient(create_app(Settings(database_url=db.url, workers=0))) as idle:  # nothing scores yet
        sent = flood(idle, heads)
        # First come first served would show ada 1-4, bob 5 and cleo 6.
        assert places(idle, heads, sent) == PLACES
        listed = idle.get("/api/v1/competitions/beta/tasks/labels/phases/dev/submissions", headers=heads["cleo"])
        assert [s["queue_position"] for s in listed.json()["submissions"]] == [2]
    with TestClient(create_app(Settings(database_url=db.url, workers=1))) as client:  # one worker
        assert client.app.state.podium.queue.wait_idle(30)  # type: ignore[attr-defined]
    assert taken_order(db, sent) == FAIR
    shown = dict(zip(sent, PLACES, strict=True))
    assert [sent[i] for i in sorted(sent, key=shown.__getitem__)] == FAIR  # each was taken at the place shown


def test_a_lone_submission_is_taken_next_while_another_competition_floods_the_worker(
    db: Database, slow: type[SlowScorer]
) -> None:
    heads = competitions(db, scorer=SLOW, scorer_options={"seconds": 0.4})
    with TestClient(create_app(Settings(database_url=db.url, workers=1))) as client:
        floods = [send(client, heads, "ada", "alpha") for _ in range(8)]
        lone = send(client, heads, "cleo", "beta")
        assert client.app.state.podium.queue.wait_idle(60)  # type: ignore[attr-defined]
    with db.session(read_only=True) as session:
        statuses = set(session.scalars(select(Submission.status)))
        came = session.scalar(select(Submission.created_at).where(Submission.id == lone))
    assert statuses == {"scored"}
    started = starts(db, [*floods, lone])
    waiting_then = [i for i in floods if started[i] > came]
    assert len(waiting_then) >= 3, "alpha's flood was still waiting when beta's submission came"
    # At most one of alpha's (one the worker may have been claiming as beta's came) goes before it;
    # first come first served would have taken every one of them first.
    assert len([i for i in waiting_then if started[i] < started[lone]]) <= 1
