"""Scoring jobs run synchronously: scores, platform failures, duplicate workers, leases and rescoring."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import undefer

from app.config import Settings
from app.services.accounts.users import find_user
from app.services.jobs import dispatch
from app.services.jobs.kinds import JobContext, JobKind
from app.services.scoring import job as job_module
from app.services.scoring import steps
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import SCORE_SUBMISSION, score_submission
from app.services.submissions import changes, intake, results
from app.storage.db import Database
from app.storage.models import Score, Submission
from app.storage.types import utcnow
from app.worker.sweeper import Sweeper
from tests.app.builders import HALF, PERFECT, as_bytes, make_competition, make_user
from tests.app.labels_scorer import LabelScorer

ZERO = timedelta(0)


def context(db: Database) -> JobContext:
    return JobContext(db, Settings(database_url=db.url, lease_seconds=30, max_attempts=3), GoldCache())


def submitted(db: Database, run: Any = HALF, **competition: Any) -> int:
    with db.session() as session:
        make_user(session, "olga")
        make_user(session, "ada")
        make_competition(session, organizers=("olga",), **competition)
        accepted = intake.submit(
            session,
            find_user(session, "ada"),
            ("comp", "labels", "dev"),
            intake.Upload(as_bytes(run), "run.json"),
            limits=context(db).limits,
            gold_cache=GoldCache(),
        )
        session.commit()
        return accepted.submission.id


def row(db: Database, submission_id: int) -> Submission:
    with db.session() as session:
        found = session.get(Submission, submission_id)
        assert found is not None
        return found


def scores(db: Database, submission_id: int) -> list[Score]:
    with db.session() as session:
        query = select(Score).where(Score.submission_id == submission_id).order_by(Score.round)
        query = query.options(undefer(Score.units), undefer(Score.breakdown))
        return list(session.scalars(query))


def test_a_job_scores_the_submission(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db, HALF)
    score_submission(context(db), submission_id)
    done = row(db, submission_id)
    assert (done.status, done.attempts, done.lease_expires_at, done.participant_message) == ("scored", 1, None, "")
    (score,) = scores(db, submission_id)
    assert (score.round, score.scorer, score.scorer_version) == (1, "test-labels", "1.0")
    assert score.metrics == {"accuracy": 0.5}  # 2 of 4 labels right
    assert score.units == {"a": {"correct": 1}, "b": {"correct": 1}, "c": {"correct": 0}, "d": {"correct": 0}}
    assert score.breakdown["document"]["c"] == {"accuracy": 0.0}


@pytest.mark.parametrize("options", [{}, {"crash": True}], ids=["scored", "crashed"])
def test_a_job_asks_for_its_upload_s_memory_back_when_done(
    db: Database, labels: type[LabelScorer], options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scored or failed, the job hands its upload's size to ``release_freed_memory``, which gives the freed memory
    back to the system where it is large (``tests/scorers/test_io_memory.py``)."""
    asked: list[int] = []
    monkeypatch.setattr(job_module, "release_freed_memory", asked.append)
    submission_id = submitted(db, PERFECT, scorer_options=options)
    score_submission(context(db), submission_id)
    assert row(db, submission_id).status == ("failed" if options else "scored")
    assert asked == [len(as_bytes(PERFECT))]


def test_a_scorer_crash_fails_the_submission_and_gives_the_quota_back(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db, PERFECT, scorer_options={"crash": True})
    score_submission(context(db), submission_id)
    failed = row(db, submission_id)
    assert failed.status == "failed"
    assert failed.quota_refunded
    assert failed.participant_message == steps.PLATFORM_FAILURE
    assert failed.organizer_message.startswith("RuntimeError: the scorer exploded")
    assert "Traceback" in failed.organizer_message
    assert scores(db, submission_id) == []


def test_a_job_for_a_scored_submission_does_nothing(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db)
    ctx = context(db)
    score_submission(ctx, submission_id)
    score_submission(ctx, submission_id)
    assert row(db, submission_id).attempts == 1
    assert len(scores(db, submission_id)) == 1


def claim(db: Database, submission_id: int, now: Any, worker: str = "w1") -> steps.Claim | None:
    with db.session() as session:
        found = steps.claim(session, submission_id, worker=worker, now=now, lease_seconds=30, max_attempts=3)
        session.commit()
        return found


def test_a_live_claim_cannot_be_taken_and_an_expired_one_can(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db)
    t0 = utcnow()
    first = claim(db, submission_id, t0)
    assert first is not None and first.attempt == 1
    assert claim(db, submission_id, t0 + timedelta(seconds=29), "w2") is None
    with db.session() as session:
        assert dispatch.take_due(session, SCORE_SUBMISSION, now=t0 + timedelta(seconds=29), requeue_after=ZERO) == []
        assert dispatch.take_due(session, SCORE_SUBMISSION, now=t0 + timedelta(seconds=31), requeue_after=ZERO) == [
            submission_id
        ]
    second = claim(db, submission_id, t0 + timedelta(seconds=31), "w2")
    assert second is not None and (second.attempt, second.round) == (2, 1)
    assert row(db, submission_id).worker == "w2"


def test_the_second_worker_to_finish_a_round_changes_nothing(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db, HALF)
    t0 = utcnow()
    slow = claim(db, submission_id, t0)
    fast = claim(db, submission_id, t0 + timedelta(seconds=31), "w2")
    assert slow is not None and fast is not None
    ctx = context(db)
    with db.session() as session:
        parsed, data = steps.load_gold(session, fast, gold_cache=ctx.gold_cache), steps.submitted_file(session, fast)
    report = steps.compute(parsed, data, limits=ctx.limits)
    with db.session() as session:
        assert steps.record_score(session, fast, report, now=t0)
        session.commit()
    with db.session() as session:
        assert not steps.record_score(session, slow, report, now=t0)
        session.commit()
    assert len(scores(db, submission_id)) == 1
    assert row(db, submission_id).status == "scored"


def test_a_submission_interrupted_too_often_is_failed(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db)
    t = utcnow()
    for attempt in (1, 2, 3):
        found = claim(db, submission_id, t)
        assert found is not None and found.attempt == attempt
        t += timedelta(seconds=31)
    assert claim(db, submission_id, t) is None
    failed = row(db, submission_id)
    assert (failed.status, failed.quota_refunded) == ("failed", True)
    assert "interrupted 3 times" in failed.organizer_message


def test_resuming_finds_queued_and_interrupted_submissions(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db)
    sent: list[tuple[str, int]] = []

    def send(kind: JobKind, row_id: int, again: bool) -> bool:
        sent.append((kind.name, row_id))
        return True

    sweeper = Sweeper(db, send, context(db).settings)
    assert sweeper.sweep(requeue_after=ZERO) == {"score_submission": [submission_id]}
    assert sent == [("score_submission", submission_id)]
    assert claim(db, submission_id, utcnow()) is not None
    assert sweeper.sweep(requeue_after=ZERO) == {}  # running with a live lease


def test_rescoring_adds_a_round_and_keeps_the_old_score(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db, HALF)
    ctx = context(db)
    score_submission(ctx, submission_id)
    with db.session() as session:
        olga = find_user(session, "olga")
        with pytest.raises(Exception, match="only the organizers"):
            changes.rescore(session, find_user(session, "ada"), submission_id)
        queued = changes.rescore(session, olga, submission_id)
        assert (queued.status, queued.scoring_round, queued.attempts) == ("queued", 2, 0)
        session.commit()
    score_submission(ctx, submission_id)
    assert [(s.round, s.metrics["accuracy"]) for s in scores(db, submission_id)] == [(1, 0.5), (2, 0.5)]
    with db.session() as session:
        assert results.current_scores(session, [submission_id])[submission_id].round == 2


def test_a_round_finishing_after_a_rescore_was_asked_leaves_the_submission_queued(
    db: Database, labels: type[LabelScorer]
) -> None:
    submission_id = submitted(db, HALF)
    ctx = context(db)
    found = claim(db, submission_id, utcnow())
    assert found is not None
    with db.session() as session:
        sub = session.get(Submission, submission_id)
        assert sub is not None
        sub.scoring_round = 2  # an organizer asked for a rescore meanwhile
        sub.status = "queued"
        session.commit()
    with db.session() as session:
        parsed, data = steps.load_gold(session, found, gold_cache=ctx.gold_cache), steps.submitted_file(session, found)
        report = steps.compute(parsed, data, limits=ctx.limits)
        assert steps.record_score(session, found, report, now=utcnow())
        session.commit()
    assert row(db, submission_id).status == "queued"
    score_submission(ctx, submission_id)
    assert [s.round for s in scores(db, submission_id)] == [1, 2]
    assert row(db, submission_id).status == "scored"


def test_scores_are_immutable(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db)
    score_submission(context(db), submission_id)
    with db.session() as session:
        score = session.scalar(select(Score))
        assert score is not None
        score.metrics = {"accuracy": 1.0}
        with pytest.raises(ValueError, match="immutable"):
            session.flush()


def test_a_heartbeat_extends_the_lease_of_the_claim_that_holds_it(db: Database, labels: type[LabelScorer]) -> None:
    submission_id = submitted(db)
    t0 = utcnow()
    first = claim(db, submission_id, t0)
    assert first is not None
    with db.session() as session:
        assert steps.heartbeat(session, first, now=t0 + timedelta(seconds=20), lease_seconds=30)
        session.commit()
    assert row(db, submission_id).lease_expires_at == t0 + timedelta(seconds=50)
    assert claim(db, submission_id, t0 + timedelta(seconds=40), "w2") is None  # the beat kept it alive
    second = claim(db, submission_id, t0 + timedelta(seconds=51), "w2")
    assert second is not None
    with db.session() as session:
        assert not steps.heartbeat(session, first, now=t0 + timedelta(seconds=52), lease_seconds=30)
