"""The fair claim keeps the guarantees of one row per message: a message that takes another row leaves its
own row waiting on that row's message, and a row whose message may not be out is left to that message."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import update

from app.config import Settings
from app.services.accounts.users import find_user
from app.services.jobs import dispatch
from app.services.jobs.kinds import JobContext
from app.services.scoring import steps
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import SCORE_SUBMISSION, score_submission
from app.services.submissions import intake
from app.storage.db import Database
from app.storage.models import Submission
from app.storage.types import utcnow
from tests.app.builders import HALF, as_bytes
from tests.app.fairness import competitions
from tests.app.labels_scorer import LabelScorer


def context(db: Database) -> JobContext:
    return JobContext(db, Settings(database_url=db.url, lease_seconds=30, max_attempts=3), GoldCache())


def uploads(db: Database, t0: datetime, *senders: tuple[str, str]) -> list[int]:
    """An upload by each ``(user, competition)`` of ``senders``, a second apart from ``t0``, each sent (confirmed)."""
    ids = []
    with db.session() as session:
        for k, (name, competition) in enumerate(senders):
            user = find_user(session, name)
            assert user is not None
            accepted = intake.submit(
                session,
                user,
                (competition, "labels", "dev"),
                intake.Upload(as_bytes(HALF), "run.json"),
                limits=context(db).limits,
                gold_cache=GoldCache(),
                now=t0 + timedelta(seconds=k),
            )
            ids.append(accepted.submission.id)
        dispatch.mark_sent(session, [(SCORE_SUBMISSION, i) for i in ids], now=t0, confirmed=True)
        session.commit()
    return ids


def row(db: Database, submission_id: int) -> Submission:
    with db.session(read_only=True) as session:
        found = session.get(Submission, submission_id)
        assert found is not None
        return found


def test_a_message_takes_the_fairest_row_whose_message_is_out_and_its_own_row_waits_on_that_message(
    db: Database, labels: type[LabelScorer]
) -> None:
    competitions(db)
    t0 = utcnow() - timedelta(minutes=1)
    alpha, beta = uploads(db, t0, ("ada", "alpha"), ("cleo", "beta"))
    with db.session() as session:  # alpha's sender may have died before sending it: the sweeper will
        session.execute(update(Submission).where(Submission.id == alpha).values(sent_at=None))
        session.commit()
    score_submission(context(db), beta)  # alpha's row is fairer, but no message of its own may be out
    assert (row(db, alpha).status, row(db, beta).status) == ("queued", "scored")
    assert row(db, alpha).enqueued_at == t0  # untouched

    with db.session() as session:  # the sweeper sent it
        session.execute(update(Submission).where(Submission.id == alpha).values(sent_at=Submission.enqueued_at))
        session.commit()
    (later,) = uploads(db, t0 + timedelta(seconds=5), ("cleo", "beta"))
    score_submission(context(db), later)  # beta was served last: its message takes alpha's row
    assert (row(db, alpha).status, row(db, later).status) == ("scored", "queued")
    waiting = row(db, later)
    # Stamped as sent again, confirmed: alpha's message, still on its way, now stands for it.
    assert waiting.enqueued_at is not None and waiting.enqueued_at > t0 + timedelta(seconds=5)
    assert waiting.sent_at == waiting.enqueued_at
    score_submission(context(db), alpha)  # that message
    assert row(db, later).status == "scored"


def test_an_interrupted_row_is_taken_only_once_a_sweeper_sent_it_again(db: Database, labels: type[LabelScorer]) -> None:
    competitions(db)
    t0 = utcnow() - timedelta(minutes=1)
    alpha, _ = uploads(db, t0, ("ada", "alpha"), ("cleo", "beta"))
    with db.session() as session:  # a worker claimed alpha's row a minute ago and died
        assert steps.claim(session, alpha, worker="dead", now=t0, lease_seconds=30, max_attempts=3) is not None
        session.commit()
    with db.session() as session:  # beta's row is done: only alpha's waits
        session.execute(update(Submission).where(Submission.id != alpha).values(status="scored"))
        session.commit()
    # A message from before the crash (delivered again, or one that stood for another row) takes nothing:
    # the row that message stood for still needs it, and the sweeper sends this one again.
    score_submission(context(db), alpha)
    assert (row(db, alpha).status, row(db, alpha).attempts) == ("running", 1)
    now = utcnow()
    with db.session() as session:
        assert dispatch.take_due(session, SCORE_SUBMISSION, now=now, requeue_after=timedelta(minutes=5)) == [alpha]
        dispatch.confirm_sent(session, SCORE_SUBMISSION, [alpha], marked_at=now)
        session.commit()
    score_submission(context(db), alpha)
    assert (row(db, alpha).status, row(db, alpha).attempts) == ("scored", 2)
