"""A queued submission's place and estimate, and the counts the metrics report."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select

from app.services.jobs import queue_stats
from app.services.scoring import steps
from app.services.scoring.gold import GoldCache
from app.services.submissions.limits import Limits
from app.storage.db import Database
from app.storage.models import Submission
from app.storage.types import utcnow
from tests.app.labels_scorer import LabelScorer
from tests.app.services.jobs.test_dispatch import queued

LIMITS = Limits(1 << 20, 1 << 20, 4)


def score(db: Database, submission_id: int, worker: str, started: datetime, finished: datetime) -> None:
    """Score the submission as ``worker`` would have: claimed at ``started``, stored at ``finished``."""
    with db.session() as session:
        found = steps.claim(session, submission_id, worker=worker, now=started, lease_seconds=60, max_attempts=3)
        assert found is not None
        parsed, data = steps.load_gold(session, found, gold_cache=GoldCache()), steps.submitted_file(session, found)
        assert steps.record_score(session, found, steps.compute(parsed, data, limits=LIMITS), now=finished)
        session.commit()


def places(db: Database, now: datetime) -> dict[int, queue_stats.QueuePlace]:
    with db.session(read_only=True) as session:
        rows = list(session.scalars(select(Submission)))
        return queue_stats.queue_places(session, rows, now)


def test_places_count_from_the_oldest_and_have_no_estimate_before_any_score(
    db: Database, labels: type[LabelScorer]
) -> None:
    t0 = utcnow()
    ids = queued(db, 3, t0)
    found = places(db, t0)
    assert {i: p.position for i, p in found.items()} == {ids[0]: 1, ids[1]: 2, ids[2]: 3}
    assert {p.estimated_scored_at for p in found.values()} == {None}


def test_estimates_follow_the_recent_pace_and_the_active_workers(db: Database, labels: type[LabelScorer]) -> None:
    t0 = utcnow()
    ids = queued(db, 4, t0)  # uploaded at t0, t0 + 1 s, t0 + 2 s, t0 + 3 s
    score(db, ids[0], "w1", t0 + timedelta(seconds=10), t0 + timedelta(seconds=12))  # took 2 s
    score(db, ids[1], "w2", t0 + timedelta(seconds=10), t0 + timedelta(seconds=14))  # took 4 s
    now = t0 + timedelta(seconds=20)
    with db.session(read_only=True) as session:
        pace = queue_stats.recent_pace(session, now)
    assert (pace.seconds, pace.seconds_by_scorer, pace.workers) == (3.0, {"test-labels": 3.0}, 2)
    found = places(db, now)
    # Mean 3 s, two workers: place 1 in 1 x 3 / 2 = 1.5 s, place 2 in 2 x 3 / 2 = 3 s.
    assert found == {
        ids[2]: queue_stats.QueuePlace(1, now + timedelta(seconds=1.5)),
        ids[3]: queue_stats.QueuePlace(2, now + timedelta(seconds=3)),
    }
    # Ten minutes later nobody scored lately: one worker is assumed.
    with db.session(read_only=True) as session:
        assert queue_stats.recent_pace(session, now + timedelta(minutes=11)).workers == 1


def test_counts_and_times_for_the_metrics(db: Database, labels: type[LabelScorer]) -> None:
    t0 = utcnow()
    ids = queued(db, 3, t0)
    score(db, ids[0], "w1", t0 + timedelta(seconds=10), t0 + timedelta(seconds=12))  # uploaded at t0
    score(db, ids[1], "w1", t0 + timedelta(seconds=12), t0 + timedelta(seconds=14))  # uploaded at t0 + 1 s
    with db.session(read_only=True) as session:
        assert queue_stats.submissions_by_status(session) == {"scored": 2, "queued": 1}
        assert queue_stats.queued_by_queue(session) == {"scoring": 1, "gpu": 0}
        assert queue_stats.upload_to_score_seconds(session) == [13.0, 12.0]  # newest first: 14 - 1, 12 - 0
