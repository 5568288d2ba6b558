"""The fair order in the distributed mode: the broker delivers first in, first out, but a real ``podium
worker`` takes the competitions' jobs in turns, as the places shown to the participants said."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.config import Settings
from app.storage.db import Database
from app.storage.models import Score, Submission
from tests.app.distributed.cluster import wait_for
from tests.app.distributed.conftest import Cluster
from tests.app.fairness import FAIR, PLACES, competitions, flood, places, send, starts, taken_order
from tests.app.slow_scorer import NAME as SLOW
from tests.app.slow_scorer import SlowScorer

pytestmark = pytest.mark.slow


def scored(db: Database) -> int:
    with db.session(read_only=True) as session:
        return session.scalar(select(func.count()).where(Submission.status == "scored")) or 0


@pytest.mark.timeout(300)
def test_a_worker_takes_the_competitions_in_turns_whatever_order_the_broker_holds(
    pg: Database, cluster: Cluster, slow: type[SlowScorer], web: Callable[[Settings], TestClient]
) -> None:
    heads = competitions(pg, scorer=SLOW, scorer_options={"seconds": 0.2})
    client = web(cluster.app_settings())
    sent = flood(client, heads)  # in the broker: ada's four, then bob's, then cleo's
    assert places(client, heads, sent) == PLACES
    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    wait_for(lambda: scored(pg) == len(sent), 120, "every submission to be scored")
    assert taken_order(pg, sent) == FAIR
    with pg.session(read_only=True) as session:
        per_submission = dict(
            session.execute(select(Score.submission_id, func.count()).group_by(Score.submission_id)).all()
        )
        attempts = set(session.scalars(select(Submission.attempts)))
    assert (per_submission, attempts) == (dict.fromkeys(sent, 1), {1})  # each scored once, never run twice


@pytest.mark.timeout(300)
def test_a_lone_submission_is_taken_next_while_another_competition_floods_the_worker(
    pg: Database, cluster: Cluster, slow: type[SlowScorer], web: Callable[[Settings], TestClient]
) -> None:
    heads = competitions(pg, scorer=SLOW, scorer_options={"seconds": 0.5})
    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    client = web(cluster.app_settings())
    floods = [send(client, heads, "ada", "alpha") for _ in range(8)]
    lone = send(client, heads, "cleo", "beta")
    wait_for(lambda: scored(pg) == len(floods) + 1, 120, "every submission to be scored")
    with pg.session(read_only=True) as session:
        came = session.scalar(select(Submission.created_at).where(Submission.id == lone))
    started = starts(pg, [*floods, lone])
    waiting_then = [i for i in floods if started[i] > came]
    assert len(waiting_then) >= 3, "alpha's flood was still waiting when beta's submission came"
    # At most one of alpha's (one the worker may have been claiming as beta's came) goes before it;
    # the broker's own order would have run every one of them first.
    assert len([i for i in waiting_then if started[i] < started[lone]]) <= 1
