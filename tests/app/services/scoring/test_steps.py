"""Claims under contention, and failing what could not be claimed, on the test database (SQLite, or
PostgreSQL with ``PODIUM_TEST_DATABASE_URL``)."""

from __future__ import annotations

import threading
from datetime import timedelta

from app.services.scoring import steps
from app.storage.db import Database
from app.storage.types import utcnow
from tests.app.labels_scorer import LabelScorer
from tests.app.worker.test_jobs import claim, row, submitted


def test_of_many_workers_claiming_at_once_exactly_one_wins(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db)
    now = utcnow()
    start = threading.Barrier(8)
    won: list[steps.Claim] = []

    def race(n: int) -> None:
        start.wait()
        found = claim(db, submission_id, now, worker=f"w{n}")
        if found is not None:
            won.append(found)

    threads = [threading.Thread(target=race, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [found.attempt for found in won] == [1]
    assert row(db, submission_id).attempts == 1


def test_giving_up_fails_only_a_queued_submission(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db)
    assert claim(db, submission_id, utcnow()) is not None  # a live worker holds it
    with db.session() as session:
        assert not steps.give_up(session, submission_id, now=utcnow(), organizer_message="database down")
        session.commit()
    assert row(db, submission_id).status == "running"


def test_a_late_failure_of_an_expired_attempt_leaves_the_new_attempt_alone(
    db: Database, labels: type[LabelScorer]
) -> None:
    submission_id = submitted(db)
    t0 = utcnow()
    old = claim(db, submission_id, t0)
    new = claim(db, submission_id, t0 + timedelta(seconds=31), worker="w2")  # the old lease expired
    assert old is not None and new is not None
    with db.session() as session:
        steps.record_failure(session, old, now=t0 + timedelta(seconds=32), organizer_message="too late")
        session.commit()
    current = row(db, submission_id)
    assert (current.status, current.attempts, current.worker, current.quota_refunded) == ("running", 2, "w2", False)
