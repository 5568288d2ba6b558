"""Program scoring on a competition's own queue, for real: a ``podium serve`` process, and ``podium worker
--remote`` processes with nothing but a credential of the queue (no PODIUM_ variable in their environment) that
run the phase's scoring program in the real sandbox on the gold they were given for that submission. A worker
killed while its program runs is replaced by another after its lease: the submission is scored once, with the
program's own numbers, and the team's quota stays exact."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session

from app.services.accounts import users
from app.services.competitions import catalog
from app.services.workers import queues
from tests.app.builders import bundle_file, make_competition, make_user
from tests.app.test_programs import PHASE, TRUTH, program_phase
from tests.app.web.browser import live_server, podium_command
from tests.app.web.test_remote_worker_live import remote_worker, wait_for
from tests.codalab import tiny

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here"),
]

#: The tiny program, slowed down so that a test can kill its worker while it scores.
SLOW_SCORE_PY = b"import time; time.sleep(4)\n" + tiny.SCORE_PY


class World:
    def __init__(self) -> None:
        self.secrets: list[str] = []
        self.tokens: dict[str, str] = {}

    def seed(self, session: Session) -> None:
        olga, ada = make_user(session, "olga", organizer=True), make_user(session, "ada")
        phase = program_phase(gold=bundle_file("gold.zip", tiny.gold(TRUTH, SLOW_SCORE_PY)), total_limit=3)
        make_competition(session, organizers=("olga",), phases=[phase], scorer="program", scorer_options=tiny.OPTIONS)
        session.flush()
        competition = catalog.get_competition(session, "comp")
        queue = queues.create_queue(session, olga, competition, "lab")
        queues.route_phase(session, olga, catalog.get_phase(session, "comp", "labels", "dev"), "lab", scoring=True)
        self.secrets = [queues.issue_credential(session, queue, f"box {i}").secret for i in (1, 2)]
        self.tokens = {"olga": users.issue_token(session, olga), "ada": users.issue_token(session, ada)}

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}


def shown(base: str, world: World, submission_id: int) -> dict[str, Any]:
    return dict(httpx.get(f"{base}/api/v1/submissions/{submission_id}", headers=world.auth("ada")).json())


def upload(base: str, world: World, data: bytes) -> dict[str, Any]:
    answer = httpx.post(
        f"{base}{PHASE}/submissions", headers=world.auth("ada"), files={"file": ("r.zip", data, "application/zip")}
    )
    assert answer.status_code == 202, answer.text
    return dict(answer.json())


def test_a_remote_worker_scores_with_the_phases_program_and_a_killed_one_is_replaced(tmp_path: Path) -> None:
    world = World()
    with live_server(tmp_path, world.seed, LEASE_SECONDS="3", SWEEP_SECONDS="1") as base:
        sent = upload(base, world, tiny.result(["a", "b", "c", "a"]))
        time.sleep(1.5)  # the platform's own pool would have scored it by now
        assert shown(base, world, sent["id"])["status"] == "queued"
        with remote_worker(base, world.secrets[0], tmp_path / "first.log") as first:
            wait_for("the first worker to score it", lambda: shown(base, world, sent["id"])["status"] == "running")
            time.sleep(1)  # well inside the program's sleep
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
        with remote_worker(base, world.secrets[1], tmp_path / "second.log"):
            scored = wait_for(
                "the second worker to score it",
                lambda: (s := shown(base, world, sent["id"]))["status"] in ("scored", "failed") and s,
            )
        assert scored["status"] == "scored", (scored, (tmp_path / "second.log").read_text())
        assert scored["metrics"] == {"accuracy": 0.5, "lines": 4.0}
        # Scored once, by the second worker, and counted once against the team.
        again = upload(base, world, tiny.result(TRUTH))
        assert again["quota"]["total_used"] == 2
        with sqlite3.connect(tmp_path / "podium.sqlite3") as db:
            attempts, worker = db.execute(
                "SELECT attempts, worker FROM submissions WHERE id = ?", (sent["id"],)
            ).fetchone()
            (scores,) = db.execute("SELECT count(*) FROM scores WHERE submission_id = ?", (sent["id"],)).fetchone()
            (second_id,) = db.execute("SELECT max(id) FROM worker_credentials").fetchone()
        assert (attempts, worker, scores) == (2, f"remote:{second_id}", 1)
        page = httpx.get(f"{base}/api/v1/submissions/{sent['id']}", headers=world.auth("olga")).json()
        assert page["organizer"]["program_run"]["stdout"].startswith("scoring 4 lines")
        # The command line: send the scoring to another queue, then delete both queues.
        login = ["--server", base, "--token", world.tokens["olga"]]
        assert podium("queue", "create", "comp", "lab2", *login).returncode == 0
        routed = podium("queue", "route", "comp/labels/dev", "lab2", "--scoring", *login)
        assert routed.returncode == 0 and "runs (and its scoring) go to lab2" in routed.stdout, routed.stderr
        listed = podium("queue", "list", "comp", *login)
        # the second upload waits there now
        assert "lab2: labels/dev (scored here: labels/dev); 1 waiting" in listed.stdout, listed.stdout
        assert podium("queue", "delete", "comp", "lab", *login).stdout.strip() == "queue lab deleted"
        deleted = podium("queue", "delete", "comp", "lab2", *login)
        assert deleted.returncode == 0, deleted.stderr
        assert deleted.stdout.strip() == "queue lab2 deleted; back to the platform: labels/dev"
        again = podium("queue", "delete", "comp", "lab2", *login)
        assert again.returncode == 2 and "has no queue named 'lab2'" in again.stderr and "Traceback" not in again.stderr
        both = podium("queue", "route", "comp/labels/dev", "--platform", "--scoring", *login)
        assert both.returncode == 2 and "--scoring goes with a queue" in both.stderr


def podium(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*podium_command(), *args], capture_output=True, text=True, timeout=60, check=False)
