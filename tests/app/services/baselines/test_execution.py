"""The worker's steps of a baseline run, called directly: claims and leases, inputs, reports with their
bounded log, and each outcome (a baseline submission, a refused output, a failure, a cancellation)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.services.baselines import execution, runs, views
from app.services.baselines.execution import ProgressReport, RunClaim
from app.services.jobs.kinds import QUEUE_KEY
from app.services.scoring.gold import GoldCache
from app.services.submissions.limits import Limits
from app.storage.db import Database
from app.storage.models import BaselineRun, Submission
from tests.app.builders import GOLD, PERFECT, as_bytes
from tests.app.labels_baselines import NAME
from tests.app.services.baselines.test_runs import Sent, setup, started, user

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LIMITS = Limits(max_upload_bytes=1 << 20, max_unzipped_bytes=1 << 20, max_zip_entries=4)


def claim(db: Database, run_id: int, now: datetime = T0, worker: str = "w1", **kwargs: Any) -> RunClaim | None:
    with db.session() as session:
        found = execution.claim_run(
            session, run_id, worker=worker, now=now, lease_seconds=30, max_attempts=kwargs.get("max_attempts", 3)
        )
        session.commit()
        return found


def row(db: Database, run_id: int) -> BaselineRun:
    with db.session() as session:
        found = session.get(BaselineRun, run_id)
        assert found is not None
        return found


def report(db: Database, found: RunClaim, news: ProgressReport, now: datetime = T0) -> str:
    with db.session() as session:
        verdict = execution.store_report(session, found, news, now=now, lease_seconds=30)
        session.commit()
        return verdict


# -- the log tail ------------------------------------------------------------------------------


def test_the_log_keeps_its_last_50_lines() -> None:
    tail = execution.trim_log("", [f"line {n}" for n in range(60)])
    assert tail.splitlines() == [f"line {n}" for n in range(10, 60)]
    assert execution.trim_log(tail, ["one more"]).splitlines()[-2:] == ["line 59", "one more"]


def test_the_log_keeps_at_most_8_kb_and_cuts_very_long_lines() -> None:
    # 50 lines of 199 characters plus a newline are 10 000 bytes; 8 192 bytes hold 40 of them.
    tail = execution.trim_log("", ["x" * 199] * 50)
    assert len(tail.splitlines()) == 40
    assert len(tail.encode()) == 8000
    (cut,) = execution.trim_log("", ["y" * 5000]).splitlines()
    assert (len(cut), cut[-1]) == (1000, "…")
    assert execution.trim_log("a\n", ["b\nc"]) == "a\nb\nc\n"  # a line with newlines is several lines


# -- claims --------------------------------------------------------------------------------------


def test_a_claim_takes_a_queued_run_once_and_an_expired_one_again(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db, steps=2)
    first = claim(db, run_id)
    assert first is not None
    assert (first.attempt, first.baseline, first.version, first.gold.scorer) == (1, NAME, "2", "test-labels")
    assert first.options["steps"] == 2
    running = row(db, run_id)
    assert (running.status, running.worker, running.lease_expires_at) == ("running", "w1", T0 + timedelta(seconds=30))
    assert running.log_tail == "12:00:00 attempt 1 started on w1\n"
    assert claim(db, run_id, T0 + timedelta(seconds=29), "w2") is None  # a live lease
    assert report(db, first, ProgressReport(progress=(5, 9))) == "go"
    second = claim(db, run_id, T0 + timedelta(seconds=31), "w2")
    assert second is not None and second.attempt == 2
    again = row(db, run_id)
    assert (again.done, again.total, again.worker) == (0, None, "w2")  # the attempt starts over
    assert again.log_tail.splitlines()[-1] == "12:00:31 attempt 2 started on w2"
    # The first worker's claim is gone: its reports and outcomes change nothing.
    assert report(db, first, ProgressReport(progress=(9, 9))) == "lost"
    with db.session() as session:
        assert not execution.record_failure(session, first, now=T0, error="late")
        session.commit()
    assert row(db, run_id).status == "running"


def test_a_run_interrupted_too_often_fails(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db)
    now = T0
    for attempt in (1, 2):
        found = claim(db, run_id, now, max_attempts=2)
        assert found is not None and found.attempt == attempt
        now += timedelta(seconds=31)
    assert claim(db, run_id, now, max_attempts=2) is None
    failed = row(db, run_id)
    assert (failed.status, failed.error) == ("failed", "the run was interrupted 2 times (worker crash); gave up")


def test_a_run_asked_to_stop_while_its_worker_was_dead_is_cancelled_by_the_next_claim(
    db: Database, system: Any
) -> None:
    setup(db)
    run_id = started(db)
    assert claim(db, run_id) is not None
    with db.session() as session:
        row_ = session.get(BaselineRun, run_id)
        assert row_ is not None
        row_.cancel_requested = True
        session.commit()
    assert claim(db, run_id, T0 + timedelta(seconds=31)) is None
    assert row(db, run_id).status == "cancelled"


def test_the_inputs_are_the_training_files_the_public_files_and_the_resources(db: Database, system: Any) -> None:
    setup(db)
    found = claim(db, started(db))
    assert found is not None
    with db.session(read_only=True) as session:
        inputs = execution.load_inputs(session, found)
    assert inputs.scorer == "test-labels"
    assert dict(inputs.training) == {"train.json": as_bytes(GOLD)}
    assert dict(inputs.inputs) == {"inputs.txt": b"a\nb\nc\nd\n"}
    assert dict(inputs.resources) == {"secret-resource.bin": b"organizers only"}


# -- reports -------------------------------------------------------------------------------------


def test_a_report_stores_progress_and_log_and_extends_the_lease(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db)
    found = claim(db, run_id)
    assert found is not None
    later = T0 + timedelta(seconds=10)
    news = ProgressReport(progress=(3, 12), progress_at=later, lines=("12:00:09 hello",), device="cpu")
    assert report(db, found, news, now=later) == "go"
    stored = row(db, run_id)
    assert (stored.done, stored.total, stored.progress_at, stored.device) == (3, 12, later, "cpu")
    assert stored.lease_expires_at == later + timedelta(seconds=30)
    assert stored.log_tail.splitlines()[-1] == "12:00:09 hello"
    with db.session() as session:
        shown = views.describe_run(session, runs.get_run(session, user(session, "olga"), run_id))
    # 3 units in the 10 s since the claim: 0.3 units/s; the 9 left take 30 s.
    assert shown.progress.rate == pytest.approx(0.3)
    assert shown.progress.eta_seconds == pytest.approx(30.0)


def test_a_report_after_a_cancel_request_says_stop(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db)
    found = claim(db, run_id)
    assert found is not None
    with db.session() as session:
        runs.request_cancel(session, user(session, "olga"), run_id, now=T0)
        session.commit()
    assert report(db, found, ProgressReport()) == "stop"
    with db.session() as session:
        assert execution.record_cancelled(session, found, now=T0)
        session.commit()
    assert row(db, run_id).status == "cancelled"


# -- outcomes ------------------------------------------------------------------------------------


def test_a_good_output_becomes_a_baseline_submission_queued_for_scoring(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db, steps=1)
    found = claim(db, run_id)
    assert found is not None
    output = as_bytes(PERFECT)
    with db.session(read_only=True) as session:
        execution.check_output(session, found, output, limits=LIMITS, gold_cache=GoldCache())
    sent = Sent()
    with db.session(info={QUEUE_KEY: sent}) as session:
        submission_id = execution.record_success(session, found, output, now=T0)
        session.commit()
    assert submission_id is not None
    assert sent.jobs == [("score_submission", submission_id)]
    done = row(db, run_id)
    assert (done.status, done.submission_id, done.finished_at, done.lease_expires_at) == (
        "succeeded",
        submission_id,
        T0,
        None,
    )
    with db.session() as session:
        submission = session.get(Submission, submission_id)
        assert submission is not None
        olga = user(session, "olga")
    assert (submission.is_baseline, submission.team_id, submission.user_id, submission.status) == (
        True,
        None,
        olga.id,
        "queued",
    )
    assert (submission.baseline_name, submission.baseline_version) == (NAME, "2")
    assert (submission.method_name, submission.original_name) == ("Copy the training labels", f"baseline-{NAME}-2.json")
    assert submission.method_description.endswith("Options: crash=False, invalid=False, refuse=False, steps=1")


def test_an_output_the_scorer_refuses_is_named_as_such(db: Database, system: Any) -> None:
    setup(db)
    found = claim(db, started(db))
    assert found is not None
    with db.session(read_only=True) as session, pytest.raises(execution.OutputRefused) as refused:
        execution.check_output(session, found, json.dumps({"a": "x"}).encode(), limits=LIMITS, gold_cache=GoldCache())
    message = str(refused.value)
    assert message.startswith("the baseline's output was refused by the scorer test-labels.\n")
    assert "- key 'b': is missing" in message


def test_a_failure_keeps_its_error(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db)
    found = claim(db, run_id)
    assert found is not None
    with db.session() as session:
        assert execution.record_failure(session, found, now=T0, error="x" * 30_000)
        session.commit()
    failed = row(db, run_id)
    assert (failed.status, len(failed.error), failed.finished_at) == ("failed", 20_000, T0)
