"""The ``run_baseline`` job: outcomes, progress and cancellation of a running system, the sweeper, and a
seed baseline run end to end by the embedded pool onto the leaderboard."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import app as cli
from app.config import Settings
from app.main import create_app
from app.services.accounts import users
from app.services.baselines import runs
from app.services.baselines.job import run_baseline
from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.services.jobs.kinds import JobContext
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import score_submission
from app.storage.blobs import read_blob
from app.storage.db import Database
from app.storage.models import BaselineRun, Submission
from app.worker.embedded import EmbeddedPool
from tests.app.builders import make_user
from tests.app.labels_baselines import FIRST_LINE, REFUSAL
from tests.app.services.baselines.test_runs import setup, started, user
from tests.conftest import ROOT


def context(db: Database) -> JobContext:
    return JobContext(db, Settings(database_url=db.url, lease_seconds=30, max_attempts=3), GoldCache())


def row(db: Database, run_id: int) -> BaselineRun:
    with db.session() as session:
        found = session.get(BaselineRun, run_id)
        assert found is not None
        return found


def eventually(check: Callable[[], bool], what: str, limit: float = 60.0) -> None:
    """Wait until ``check()`` holds (a guard against hanging, not a measure of speed)."""
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def test_a_run_becomes_a_baseline_submission_that_scores_like_any_other(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db, steps=2)
    ctx = context(db)
    run_baseline(ctx, run_id)
    done = row(db, run_id)
    assert (done.status, done.error, done.device, done.attempts) == ("succeeded", "", "cpu", 1)
    assert (done.done, done.total) == (6, 6)  # 2 steps + 4 ids
    assert FIRST_LINE in done.log_tail
    assert done.submission_id is not None
    # The log ends with a closing line: the outcome, the time it took, what was written.
    assert re.fullmatch(
        rf"\d\d:\d\d:\d\d finished in \d+\.\d s: 6 of 6 units done, wrote \d+ bytes; "
        rf"submission {done.submission_id} queued for scoring",
        done.log_tail.splitlines()[-1],
    )
    score_submission(ctx, done.submission_id)
    with db.session() as session:
        scored = session.get(Submission, done.submission_id)
        assert scored is not None and scored.status == "scored"
    run_baseline(ctx, run_id)  # a second job for a finished run does nothing
    assert row(db, run_id).attempts == 1


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"refuse": True}, REFUSAL),
        ({"crash": True}, "RuntimeError: the system exploded\n\nTraceback"),
        ({"invalid": True}, "the baseline's output was refused by the scorer test-labels."),
    ],
)
def test_a_failing_run_keeps_its_error_and_makes_no_submission(
    db: Database, system: Any, options: dict[str, Any], error: str
) -> None:
    setup(db)
    run_id = started(db, **options)
    run_baseline(context(db), run_id)
    failed = row(db, run_id)
    assert (failed.status, failed.submission_id) == ("failed", None)
    assert failed.error.startswith(error)
    closing = failed.log_tail.splitlines()[-1]
    assert re.fullmatch(r"\d\d:\d\d:\d\d failed in \d+\.\d s: .+", closing), failed.log_tail
    assert closing.endswith(error.splitlines()[0])
    with db.session() as session:
        assert session.query(Submission).count() == 0


def test_a_run_started_for_another_version_of_the_system_fails(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db)
    with db.session() as session:
        run = session.get(BaselineRun, run_id)
        assert run is not None
        run.baseline_version = "1"  # started by a server with an older release
        session.commit()
    run_baseline(context(db), run_id)
    failed = row(db, run_id)
    assert (failed.status, failed.error) == (
        "failed",
        "this worker has version 2 of baseline test-labels-copy, but the run was started for version 1; "
        "start a new run",
    )


def test_a_running_run_shows_its_progress_and_stops_when_cancelled(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db, steps=100_000)  # about 17 minutes unless it is stopped
    job = threading.Thread(target=run_baseline, args=(context(db), run_id))
    job.start()
    try:
        eventually(lambda: row(db, run_id).done > 0 and "step 0" in row(db, run_id).log_tail, "a stored report")
        running = row(db, run_id)
        assert (running.status, running.total) == ("running", 100_004)
        # Each line has the time it was logged; after the job's own lines come the system's.
        lines = [line.split(" ", 1)[1] for line in running.log_tail.splitlines()]
        assert lines[1:4] == [
            "test-labels-copy 2: 1 training file(s), 1 input file(s), 1 resource(s)",
            FIRST_LINE,
            "resources: secret-resource.bin",
        ]
        with db.session() as session:
            asked = runs.request_cancel(session, user(session, "olga"), run_id)
            session.commit()
        assert (asked.status, asked.cancel_requested) == ("running", True)
    finally:
        job.join(120)
    assert not job.is_alive()
    stopped = row(db, run_id)
    assert stopped.status == "cancelled"
    assert 0 < stopped.done < 100_004
    assert stopped.submission_id is None
    assert re.fullmatch(
        r"\d\d:\d\d:\d\d cancelled in \d+\.\d s, as an organizer asked; no submission written",
        stopped.log_tail.splitlines()[-1],
    )


def test_the_embedded_pool_resumes_a_queued_run_when_it_starts(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db)  # queued while no pool ran
    pool = EmbeddedPool(context(db), workers=1, sweep_seconds=3600)
    pool.start()
    try:
        assert pool.wait_idle(60)
    finally:
        pool.stop()
    done = row(db, run_id)
    assert done.status == "succeeded"
    with db.session() as session:
        submission = session.get(Submission, done.submission_id)
        assert submission is not None and submission.status == "scored"  # the scoring job followed


# -- end to end: a seed baseline on the example FAMuS data ----------------------------------------


@pytest.fixture
def served(db: Database, tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(database_url=db.url, workers=1, data_dir=tmp_path, lease_seconds=30)
    with TestClient(create_app(settings)) as client:
        yield client


def token(db: Database, name: str) -> dict[str, str]:
    with db.session() as session:
        found = users.find_user(session, name)
        assert found is not None
        issued = users.issue_token(session, found)
        session.commit()
    return {"Authorization": f"Bearer {issued}"}


def test_a_seed_baseline_runs_in_the_pool_and_its_marked_row_has_the_offline_numbers(
    db: Database, served: TestClient, tmp_path: Path
) -> None:
    with db.session() as session:
        olga = make_user(session, "olga", organizer=True)
        catalog.create_competition(session, load_bundle(ROOT / "examples" / "famus"), creator=olga)
        session.commit()
    phase = "/api/v1/competitions/famus/tasks/sv/phases/dev"
    started_run = served.post(f"{phase}/baseline-runs", headers=token(db, "olga"), json={"baseline": "famus-sv-lemma"})
    assert started_run.status_code == 202, started_run.text
    assert served.app.state.podium.queue.wait_idle(120)  # type: ignore[attr-defined]

    run = served.get(f"/api/v1/baseline-runs/{started_run.json()['id']}", headers=token(db, "olga")).json()
    assert (run["status"], run["error"], run["progress"]["fraction"]) == ("succeeded", "", 1.0)
    board = served.get(f"{phase}/leaderboard").json()
    (entry,) = [e for e in board["entries"] if e["baseline"]]
    assert (entry["system"], entry["team"], entry["submission_id"]) == (
        "famus-sv-lemma 1",
        "famus-sv-lemma",
        run["submission_id"],
    )

    with db.session() as session:
        submission = session.get(Submission, run["submission_id"])
        assert submission is not None
        output = read_blob(session, submission.blob_id)
    (tmp_path / "output.json").write_bytes(output)
    offline = CliRunner().invoke(
        cli,
        [
            "score",
            "--scorer",
            "famus-sv",
            "--gold",
            str(ROOT / "examples" / "famus" / "data" / "sv-dev.jsonl"),
            "--submission",
            str(tmp_path / "output.json"),
            "--json",
        ],
    )
    assert offline.exit_code == 0, offline.stderr
    assert entry["metrics"] == json.loads(offline.stdout)["metrics"]
