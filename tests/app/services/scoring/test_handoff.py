"""The upload's parse handed to its job in the same process, and the job's own parse everywhere else."""

from __future__ import annotations

import time

from app.config import Settings
from app.services.accounts.users import find_user
from app.services.jobs.kinds import JobContext
from app.services.scoring.gold import GoldCache, gold_key
from app.services.scoring.handoff import ParsedSubmissions
from app.services.scoring.job import score_submission
from app.services.submissions import intake
from app.storage.db import Database
from app.storage.models import Score, Submission
from tests.app.builders import HALF, PERFECT, as_bytes, make_competition, make_user
from tests.app.labels_scorer import LabelScorer

KEY = gold_key(1, "ab" * 32, "test-labels", {})


def test_an_entry_is_taken_once() -> None:
    handoff = ParsedSubmissions()
    assert handoff.put(KEY, "f1", {"a": "1"}, 10)
    assert handoff.take(KEY, "f2") is None
    assert handoff.take(gold_key(2, "ab" * 32, "test-labels", {}), "f1") is None  # another phase's gold
    entry = handoff.take(KEY, "f1")
    assert entry is not None and entry.submission == {"a": "1"}
    assert handoff.take(KEY, "f1") is None
    assert len(handoff) == 0


def test_entries_are_bounded_by_their_files_bytes_and_the_older_ones_stay() -> None:
    handoff = ParsedSubmissions(max_bytes=100)
    assert handoff.put(KEY, "f1", "one", 60)
    assert not handoff.put(KEY, "f2", "two", 60)  # would exceed the bound: the waiting one is the next job
    assert handoff.take(KEY, "f2") is None
    assert handoff.take(KEY, "f1") is not None
    assert handoff.put(KEY, "f2", "two", 60)  # room again once taken


def test_entries_whose_job_never_came_are_dropped() -> None:
    handoff = ParsedSubmissions(max_bytes=100, max_age=0.01)
    assert handoff.put(KEY, "f1", "one", 60)
    time.sleep(0.05)
    assert handoff.put(KEY, "f2", "two", 60)  # the stale entry made room
    assert handoff.take(KEY, "f1") is None
    assert len(handoff) == 1


def upload(db: Database, handoff: ParsedSubmissions | None, run: dict[str, str]) -> int:
    with db.session() as session:
        accepted = intake.submit(
            session,
            find_user(session, "ada"),
            ("comp", "labels", "dev"),
            intake.Upload(as_bytes(run), "run.json"),
            limits=context(db).limits,
            gold_cache=GoldCache(),
            handoff=handoff,
        )
        session.commit()
        return accepted.submission.id


def context(db: Database, handoff: ParsedSubmissions | None = None) -> JobContext:
    return JobContext(db, Settings(database_url=db.url, lease_seconds=30), GoldCache(), handoff=handoff)


def accuracy(db: Database, submission_id: int) -> float:
    with db.session() as session:
        row = session.get(Submission, submission_id)
        assert row is not None and row.status == "scored"
        (score,) = session.query(Score).filter(Score.submission_id == submission_id)
        return float(score.metrics["accuracy"])


def setup(db: Database) -> None:
    with db.session() as session:
        make_user(session, "olga")
        make_user(session, "ada")
        make_competition(session, organizers=("olga",))
        session.commit()


def test_the_job_takes_what_the_upload_parsed_and_a_job_elsewhere_reads_the_blob(
    db: Database, labels: type[LabelScorer]
) -> None:
    setup(db)
    handoff = ParsedSubmissions()
    here = upload(db, handoff, HALF)
    assert len(handoff) == 1
    score_submission(context(db, handoff), here)
    assert len(handoff) == 0  # taken by the job
    elsewhere = upload(db, None, HALF)  # as the web tier of the distributed mode: nothing kept
    score_submission(context(db), elsewhere)  # as a worker in another process: parses the blob
    assert accuracy(db, here) == accuracy(db, elsewhere) == 0.5


def test_the_job_scores_what_was_handed_over_without_parsing_again(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    handoff = ParsedSubmissions()
    submission_id = upload(db, handoff, HALF)
    with db.session() as session:
        sha256 = session.get(Submission, submission_id).sha256
    ((key, digest),) = handoff._entries
    assert digest == sha256
    entry = handoff.take(key, digest)
    assert entry is not None
    assert entry.submission == HALF
    handoff.put(key, digest, dict(PERFECT), 1)
    score_submission(context(db, handoff), submission_id)
    assert accuracy(db, submission_id) == 1.0  # the parse handed over was scored, not the blob parsed again
