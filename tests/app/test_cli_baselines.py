"""``podium baselines`` and ``podium baseline run``, the latter against a real server in this process."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from sqlalchemy import select
from typer.testing import CliRunner, Result

from app.cli import app
from app.cli.client import describe_progress, new_lines, parse_options
from app.config import Settings
from app.main import create_app
from app.storage.models import BaselineRun
from tests.app.labels_baselines import NAME
from tests.app.services.baselines.test_runs import setup
from tests.app.web.test_api import auth

TASK = "comp/labels/dev"


def podium(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def server(settings: Settings, system: Any) -> Iterator[str]:
    """The app served by uvicorn on a free local port, in a thread of this process."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    served = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=served.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not served.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    served.should_exit = True
    thread.join(30)


def test_baselines_lists_the_registry(system: Any) -> None:
    listed = podium("baselines", "--scorer", "test-labels")
    assert listed.exit_code == 0
    assert listed.stdout.splitlines()[:3] == [
        f"{NAME} (version 2): Copy the training labels",
        "  scorers: test-labels",
        "  runs on: the CPU",
    ]
    assert "    steps (default 0): slow steps (10 ms each) before answering" in listed.stdout
    as_json = json.loads(podium("baselines", "--json").stdout)
    assert {"svident-tfidf-lr", "famus-sv-lemma", NAME} <= {b["name"] for b in as_json["baselines"]}
    assert podium("baselines", "--scorer", "nope").stdout == "no baseline writes submissions for 'nope'\n"


def test_options_are_read_as_json_or_kept_as_text() -> None:
    assert parse_options(["steps=3", "c=0.5", "lower=true", "name=abc", "empty="]) == {
        "steps": 3,
        "c": 0.5,
        "lower": True,
        "name": "abc",
        "empty": "",
    }


def test_a_malformed_option_is_refused(system: Any) -> None:
    args = ("--server", "http://127.0.0.1:9", "--token", "t", "--task", TASK, "--option", "steps")
    refused = podium("baseline", "run", NAME, *args)
    assert (refused.exit_code, refused.stderr) == (2, "--option must be NAME=VALUE, like c=0.5; got 'steps'\n")


def test_only_the_new_lines_of_a_moving_log_tail_are_printed() -> None:
    assert new_lines("", "a\nb\n") == ["a", "b"]
    assert new_lines("a\nb\n", "a\nb\nc\n") == ["c"]
    assert new_lines("a\nb\nc\n", "b\nc\nd\ne\n") == ["d", "e"]  # "a" dropped out of the tail
    assert new_lines("a\n", "x\ny\n") == ["x", "y"]


def test_progress_is_one_line() -> None:
    run = {
        "status": "running",
        "progress": {"done": 50, "total": 250, "fraction": 0.2, "rate": 2.5, "eta_seconds": 80.0},
    }
    assert describe_progress(run) == "running, 50/250 (20.0 %), 2.5/s, about 80 s left"
    unknown = {"done": 0, "total": None, "fraction": None, "rate": None, "eta_seconds": None}
    queued = {"status": "queued", "progress": unknown}
    assert describe_progress(queued) == "queued"


def test_a_refused_start_exits_2_with_the_servers_reason(server: str, db: Any) -> None:
    setup(db)
    token = auth(db, "ada")["Authorization"].removeprefix("Bearer ")
    refused = podium("baseline", "run", NAME, "--server", server, "--token", token, "--task", TASK)
    assert refused.exit_code == 2
    assert refused.stderr == "refused (403 forbidden): only the organizers of 'comp' may do this\n"


def test_a_run_is_followed_to_its_scored_submission(server: str, db: Any) -> None:
    setup(db)
    token = auth(db, "olga")["Authorization"].removeprefix("Bearer ")
    args = ("baseline", "run", NAME, "--server", server, "--token", token, "--task", TASK, "--option", "steps=3")
    followed = podium(*args, "--wait")
    assert followed.exit_code == 0, followed.output
    lines = followed.stdout.splitlines()
    # Ids are not reset between tests on PostgreSQL: read the ones this run got.
    with db.session(read_only=True) as session:
        run_id, submission_id = session.execute(
            select(BaselineRun.id, BaselineRun.submission_id).order_by(BaselineRun.id.desc()).limit(1)
        ).one()
    assert lines[0].startswith(f"baseline run {run_id} (test-labels-copy 2) on comp/labels/dev: ")
    assert any(line.endswith("copying the training labels") and line.startswith("  | ") for line in lines)
    assert lines[-2:] == [f"submission {submission_id}: scored", "  accuracy  100.00 %"]  # percent, like the pages

    as_json = json.loads(podium(*args, "--wait", "--json").stdout)
    assert (as_json["run"]["status"], as_json["run"]["options"]["steps"]) == ("succeeded", 3)
    assert (as_json["submission"]["status"], as_json["submission"]["metrics"]) == ("scored", {"accuracy": 1.0})

    queued = podium(*args)
    third = as_json["run"]["id"] + 1
    expected = f"baseline run {third} (test-labels-copy 2) on comp/labels/dev: queued\n"
    assert (queued.exit_code, queued.stdout) == (0, expected)
