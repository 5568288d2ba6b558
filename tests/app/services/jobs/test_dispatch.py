"""Which jobs a sweeper sends again, and that two sweepers never send the same row."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from app.services.accounts.users import find_user
from app.services.baselines.job import RUN_BASELINE
from app.services.code.job import RUN_CODE
from app.services.jobs import counters, dispatch
from app.services.jobs.kinds import JobKind
from app.services.jobs.registry import KINDS, UnknownJob, kind_named
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import SCORE_SUBMISSION
from app.services.submissions import intake
from app.services.submissions.limits import Limits
from app.storage.db import Database
from app.storage.models import BaselineRun, CodeRun, Phase, RunStatus, Submission
from app.storage.types import utcnow
from tests.app.builders import HALF, as_bytes, make_competition, make_user
from tests.app.labels_scorer import LabelScorer

LIMITS = Limits(1 << 20, 1 << 20, 4)
MINUTE = timedelta(minutes=1)


def queued(db: Database, n: int, now: datetime) -> list[int]:
    """``n`` queued submissions made at ``now``, ``now`` + 1 s, ... (no message sent for any)."""
    with db.session() as session:
        make_user(session, "ada")
        make_competition(session)
        ada = find_user(session, "ada")
        ids = []
        for k in range(n):
            upload = intake.Upload(as_bytes(HALF), "run.json")
            at = now + timedelta(seconds=k)
            accepted = intake.submit(
                session, ada, ("comp", "labels", "dev"), upload, limits=LIMITS, gold_cache=GoldCache(), now=at
            )
            ids.append(accepted.submission.id)
        session.commit()
    return ids


def set_rows(db: Database, ids: list[int], **values: Any) -> None:
    with db.session() as session:
        session.execute(update(Submission).where(Submission.id.in_(ids)).values(**values))
        session.commit()


def take(db: Database, now: datetime, kind: JobKind = SCORE_SUBMISSION, *, confirm: bool = True) -> list[int]:
    """What a sweeper takes at ``now``; with ``confirm`` it then sends them all (the queue took them)."""
    with db.session() as session:
        taken = dispatch.take_due(session, kind, now=now, requeue_after=MINUTE)
        if confirm:
            dispatch.confirm_sent(session, kind, taken, marked_at=now)
        session.commit()
    return taken


def counted(db: Database) -> dict[tuple[str, str], int]:
    with db.session(read_only=True) as session:
        return counters.totals(session)


def test_a_queued_job_never_sent_is_due_and_taken_once(db: Database, labels: type[LabelScorer]) -> None:
    t0 = utcnow()
    ids = queued(db, 3, t0)
    assert take(db, t0) == ids  # oldest first
    assert take(db, t0) == []  # the first take stamped them
    assert take(db, t0 + timedelta(seconds=59)) == []
    assert take(db, t0 + timedelta(seconds=61)) == ids  # sent a minute ago and still queued: lost
    assert counted(db) == {("resent", "score_submission"): 6}


def test_a_stamp_never_confirmed_is_sent_again_within_seconds(db: Database, labels: type[LabelScorer]) -> None:
    # What a web process killed between its commit and its send leaves: a stamp, no confirmation.
    t0 = utcnow()
    [stranded, sent, in_memory] = queued(db, 3, t0)
    with db.session() as session:
        dispatch.mark_sent(session, [(SCORE_SUBMISSION, stranded), (SCORE_SUBMISSION, sent)], now=t0, confirmed=False)
        dispatch.mark_sent(session, [(SCORE_SUBMISSION, in_memory)], now=t0, confirmed=True)
        dispatch.confirm_sent(session, SCORE_SUBMISSION, [sent], marked_at=t0)
        session.commit()
    grace = dispatch.SEND_GRACE.total_seconds()
    assert take(db, t0 + timedelta(seconds=grace - 1)) == []
    assert take(db, t0 + timedelta(seconds=grace + 1)) == [stranded]
    with db.session(read_only=True) as session:
        row = session.get(Submission, stranded)
        assert row is not None and row.sent_at == row.enqueued_at == t0 + timedelta(seconds=grace + 1)


def test_after_a_broker_loss_every_queued_job_is_taken(db: Database, labels: type[LabelScorer]) -> None:
    t0 = utcnow()
    [waiting, running, later] = queued(db, 3, t0)
    set_rows(db, [waiting, running], enqueued_at=t0, sent_at=t0)
    set_rows(db, [running], status="running", lease_expires_at=t0 + timedelta(minutes=5))
    lost_at = t0 + timedelta(seconds=5)
    set_rows(db, [later], enqueued_at=lost_at + timedelta(seconds=1), sent_at=lost_at + timedelta(seconds=1))
    with db.session() as session:
        # The running one's worker holds its message (and its lease); the later one was sent after.
        assert dispatch.take_lost(session, SCORE_SUBMISSION, now=lost_at) == [waiting]
        session.commit()
    assert counted(db) == {("resent", "score_submission"): 1}


def test_a_message_sent_recently_is_left_alone(db: Database, labels: type[LabelScorer]) -> None:
    t0 = utcnow()
    [fresh, stale] = queued(db, 2, t0)
    set_rows(db, [fresh], enqueued_at=t0)
    set_rows(db, [stale], enqueued_at=t0 - timedelta(minutes=2))
    assert take(db, t0) == [stale]


def test_a_running_job_is_due_once_its_lease_expired(db: Database, labels: type[LabelScorer]) -> None:
    t0 = utcnow()
    [alive, dead] = queued(db, 2, t0)
    # Both were sent at t0 - 10 s and claimed; only ``dead`` stopped renewing its lease, at t0.
    set_rows(db, [alive, dead], status="running", enqueued_at=t0 - timedelta(seconds=10))
    set_rows(db, [alive], lease_expires_at=t0 + timedelta(minutes=5))
    set_rows(db, [dead], lease_expires_at=t0)
    assert take(db, t0 - timedelta(seconds=1)) == []  # not expired yet
    assert take(db, t0 + timedelta(seconds=1)) == [dead]
    # Sent again at t0 + 1 s, after the lease expired: not again until a minute has passed.
    assert take(db, t0 + timedelta(seconds=30)) == []
    assert take(db, t0 + timedelta(seconds=62)) == [dead]
    assert counted(db) == {("resumed", "score_submission"): 2}


def test_finished_jobs_are_never_due(db: Database, labels: type[LabelScorer]) -> None:
    t0 = utcnow()
    ids = queued(db, 2, t0)
    set_rows(db, ids[:1], status="scored")
    set_rows(db, ids[1:], status="failed")
    assert take(db, t0 + timedelta(days=1)) == []


def test_an_unsent_mark_is_cleared_only_where_it_is_still_ours(db: Database, labels: type[LabelScorer]) -> None:
    t0 = utcnow()
    [mine, theirs] = queued(db, 2, t0)
    assert take(db, t0, confirm=False) == [mine, theirs]
    set_rows(db, [theirs], enqueued_at=t0 + timedelta(seconds=5))  # another sender stamped it since
    with db.session() as session:
        dispatch.unmark(session, SCORE_SUBMISSION, [mine, theirs], marked_at=t0)
        session.commit()
        assert session.get(Submission, mine).enqueued_at is None  # type: ignore[union-attr]
        assert session.get(Submission, theirs).enqueued_at == t0 + timedelta(seconds=5)  # type: ignore[union-attr]


def test_two_sweepers_at_once_send_each_row_once(db: Database, labels: type[LabelScorer]) -> None:
    t0 = utcnow()
    ids = queued(db, 5, t0)
    other: list[int] = []
    with db.session() as first:
        assert dispatch.take_due(first, SCORE_SUBMISSION, now=t0, requeue_after=MINUTE) == ids
        # The second sweeper starts while the first has not committed: it waits for the first's
        # locks, then finds every row stamped.
        second = threading.Thread(target=lambda: other.extend(take(db, t0)))
        second.start()
        second.join(0.5)
        first.commit()
    second.join(30)
    assert other == []


def test_baseline_runs_are_swept_too(db: Database, labels: type[LabelScorer]) -> None:
    t0 = utcnow()
    queued(db, 1, t0)
    with db.session() as session:
        phase_id = session.scalar(select(Phase.id))
        run = BaselineRun(phase_id=phase_id, baseline="b", baseline_version="1", status="queued", created_at=t0)
        session.add(run)
        session.commit()
        run_id = run.id
    assert take(db, t0, RUN_BASELINE) == [run_id]


def test_code_runs_are_swept_too_and_one_whose_worker_died_is_resumed(db: Database, labels: type[LabelScorer]) -> None:
    t0 = utcnow()
    queued(db, 1, t0)
    with db.session() as session:
        submission = session.scalars(select(Submission)).first()
        assert submission is not None
        waiting = CodeRun(submission_id=submission.id, program_blob_id=submission.blob_id, created_at=t0)
        session.add(waiting)
        session.commit()
        run_id = waiting.id
    assert take(db, t0, RUN_CODE) == [run_id]
    with db.session() as session:  # its worker took it, then died: the lease expires
        held = session.get(CodeRun, run_id)
        assert held is not None
        held.status, held.lease_expires_at = RunStatus.RUNNING, t0 + timedelta(seconds=30)
        session.commit()
    assert take(db, t0 + timedelta(seconds=20), RUN_CODE) == []
    assert take(db, t0 + timedelta(seconds=31), RUN_CODE) == [run_id]


def test_each_kind_of_job_is_declared_once_with_its_queue_and_table() -> None:
    assert [(kind.name, kind.queue, kind.row) for kind in KINDS] == [
        ("score_submission", "scoring", Submission),
        ("run_baseline", "gpu", BaselineRun),
        ("run_code", "gpu", CodeRun),
    ]
    assert kind_named("run_baseline") is RUN_BASELINE
    assert kind_named("run_code") is RUN_CODE


def test_an_unknown_job_is_refused_by_name() -> None:
    known = "score_submission, run_baseline, run_code"
    with pytest.raises(UnknownJob, match=f"no job named 'mystery'; known jobs: {known}"):
        kind_named("mystery")


def test_a_job_delivered_to_a_worker_that_died_before_claiming_it_is_taken_once(
    db: Database, labels: type[LabelScorer]
) -> None:
    t0 = utcnow()
    waiting, claimed, sent_again = queued(db, 3, t0)
    take(db, t0)  # all three sent and confirmed at t0
    set_rows(db, [claimed], status="running", lease_expires_at=t0 + MINUTE)
    set_rows(db, [sent_again], enqueued_at=t0 + 2 * MINUTE)  # sent again after the delivery below
    delivered = dict.fromkeys([waiting, claimed, sent_again], t0 + MINUTE)
    later = t0 + 3 * MINUTE
    with db.session() as session:
        # Only the row still waiting since its delivery: a claimed one has its lease, a row sent
        # again has a newer message.
        assert dispatch.take_stranded(session, SCORE_SUBMISSION, delivered, now=later) == [waiting]
        assert dispatch.take_stranded(session, SCORE_SUBMISSION, delivered, now=later) == []  # stamped: once
        session.commit()
    assert counted(db)[("resumed", "score_submission")] == 1
