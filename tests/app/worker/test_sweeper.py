"""The sweeper sends what waits, never twice, and stops at the first refusal until the next sweep."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update

from app.config import Settings
from app.services.jobs.kinds import JobKind
from app.storage.db import Database
from app.storage.models import Submission
from app.storage.types import utcnow
from app.worker.sweeper import Sweeper
from tests.app.labels_scorer import LabelScorer
from tests.app.services.jobs.test_dispatch import queued


def stamps(db: Database) -> list[bool]:
    with db.session(read_only=True) as session:
        return [at is not None for at in session.scalars(select(Submission.enqueued_at).order_by(Submission.id))]


def test_a_sweep_sends_each_waiting_job_once(db: Database, labels: type[LabelScorer]) -> None:
    ids = queued(db, 3, utcnow() - timedelta(seconds=10))
    sent: list[tuple[str, int]] = []

    def send(kind: JobKind, row_id: int, again: bool) -> bool:
        assert again  # a job sent again goes ahead of fresh ones
        sent.append((kind.name, row_id))
        return True

    sweeper = Sweeper(db, send, Settings(database_url=db.url))
    assert sweeper.sweep() == {"score_submission": ids}
    assert sweeper.sweep() == {}  # stamped and confirmed: sent once
    assert sent == [("score_submission", i) for i in ids]
    assert stamps(db) == [True, True, True]
    with db.session(read_only=True) as session:
        rows = session.execute(select(Submission.enqueued_at, Submission.sent_at)).all()
    assert all(sent_at == enqueued_at for enqueued_at, sent_at in rows)  # the sends are confirmed


def test_a_refused_send_leaves_the_rest_for_the_next_sweep(db: Database, labels: type[LabelScorer]) -> None:
    ids = queued(db, 3, utcnow() - timedelta(seconds=10))
    accepted: list[int] = []

    def send(kind: JobKind, row_id: int, again: bool) -> bool:  # the broker takes one message, then goes away
        if accepted:
            return False
        accepted.append(row_id)
        return True

    sweeper = Sweeper(db, send, Settings(database_url=db.url))
    assert sweeper.sweep() == {"score_submission": ids[:1]}
    assert stamps(db) == [True, False, False]
    accepted.clear()
    assert sweeper.sweep() == {"score_submission": ids[1:2]}


def test_the_sweeper_thread_sends_on_start_and_stops(db: Database, labels: type[LabelScorer]) -> None:
    ids = queued(db, 1, utcnow() - timedelta(seconds=10))
    with db.session() as session:
        session.execute(update(Submission).values(status="running", lease_expires_at=utcnow() - timedelta(seconds=1)))
        session.commit()
    sent: list[int] = []

    def send(kind: JobKind, row_id: int, again: bool) -> bool:
        sent.append(row_id)
        return True

    sweeper = Sweeper(db, send, Settings(database_url=db.url, sweep_seconds=3600))
    sweeper.start()
    sweeper.stop()
    assert sent == ids  # the interrupted job went out at once
