"""Organizers' own workers, for real: a ``podium serve`` process, and ``podium worker --remote`` processes started
with nothing but a credential of the competition's queue (no database URL, no secret key in their environment)
that run a team's program in the real sandbox. A worker killed mid-run is replaced by another after its lease,
the run finishes once and the team's quota stays exact; revoking a credential stops its worker at its next call;
a forged or replayed result is refused."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session

from app.services.accounts import users
from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.services.workers import queues
from tests.app.builders import make_user
from tests.app.test_code_runs import EXAMPLE, PHASE, program
from tests.app.web.browser import live_server, podium_command
from tests.conftest import environment_without_settings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here"),
]

#: The program sleeps, so that a test can kill its worker while it runs.
SLOW = 'import time; time.sleep(5)\njson.dump({u: "0" for u in uuids}, (output / "predictions.json").open("w"))\n'


def wait_for(what: str, check: Callable[[], Any], timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class World:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.secrets: list[str] = []
        self.tokens: dict[str, str] = {}

    def seed(self, session: Session) -> None:
        spec = load_bundle(EXAMPLE)
        task = spec.tasks[0]
        phase = replace(task.phases[0], total_limit=3)
        spec = replace(spec, tasks=(replace(task, phases=(phase,)),), organizers=("olga",))
        olga, ada = make_user(session, "olga", organizer=True), make_user(session, "ada")
        catalog.create_competition(session, spec)
        session.flush()
        competition = catalog.get_competition(session, "svident-code")
        queue = queues.create_queue(session, olga, competition, "lab")
        queues.route_phase(session, olga, catalog.get_phase(session, "svident-code", "detection", "test"), "lab")
        self.secrets = [queues.issue_credential(session, queue, f"box {i}").secret for i in (1, 2)]
        self.tokens = {"olga": users.issue_token(session, olga), "ada": users.issue_token(session, ada)}

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}


@contextmanager
def remote_worker(base: str, secret: str, log_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``podium worker --remote`` with the credential in a file, in an environment with no PODIUM_ variable."""
    credential = log_path.with_suffix(".credential")
    credential.write_text(secret + "\n")
    env = environment_without_settings()
    assert "PODIUM_DATABASE_URL" not in env and "PODIUM_SECRET_KEY" not in env
    assert not any(secret_of_server in json.dumps(env) for secret_of_server in ("sqlite:///", "postgresql"))
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*podium_command(), "worker", "--remote", base, "--credential-file", str(credential), "--poll", "0.3"],
            env=env,
            cwd=log_path.parent,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def queue_view(base: str, world: World) -> dict[str, Any]:
    answer = httpx.get(f"{base}/api/v1/competitions/svident-code/queues/lab", headers=world.auth("olga"))
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def upload(base: str, world: World, data: bytes) -> int:
    answer = httpx.post(
        f"{base}{PHASE}/submissions", headers=world.auth("ada"), files={"file": ("p.zip", data, "application/zip")}
    )
    assert answer.status_code == 202, answer.text
    return int(answer.json()["id"])


def submission(base: str, world: World, submission_id: int) -> dict[str, Any]:
    return dict(httpx.get(f"{base}/api/v1/submissions/{submission_id}", headers=world.auth("ada")).json())


def test_a_killed_remote_worker_is_replaced_and_the_run_finishes_once(tmp_path: Path) -> None:
    world = World(tmp_path)
    with live_server(tmp_path, world.seed, LEASE_SECONDS="4", SWEEP_SECONDS="1") as base:
        submission_id = upload(base, world, program(SLOW))
        with remote_worker(base, world.secrets[0], tmp_path / "first.log") as first:
            running = wait_for(
                "the first worker to run it", lambda: queue_view(base, world)["credentials"][0]["running"]
            )
            (run_id,) = running
            time.sleep(1)  # well inside the program's sleep
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
        assert submission(base, world, submission_id)["status"] == "awaiting_run"
        with remote_worker(base, world.secrets[1], tmp_path / "second.log") as second:
            scored = wait_for(
                "the second worker to finish it",
                lambda: (s := submission(base, world, submission_id))["status"] in ("scored", "failed") and s,
            )
            assert scored["status"] == "scored", (scored, (tmp_path / "second.log").read_text())
            view = queue_view(base, world)
            assert view["waiting"] == 0 and view["credentials"][1]["last_contact_at"] is not None
            # Revoking the second credential stops its worker at its next call.
            credential_id = view["credentials"][1]["id"]
            revoked = httpx.post(
                f"{base}/api/v1/competitions/svident-code/queues/lab/credentials/{credential_id}/revoke",
                headers=world.auth("olga"),
            )
            assert revoked.status_code == 200, revoked.text
            assert second.wait(30) == 1
            assert "revoked" in (tmp_path / "second.log").read_text()
        mine = httpx.get(f"{base}{PHASE}/submissions", headers=world.auth("ada")).json()["submissions"]
        assert [(s["id"], s["status"]) for s in mine] == [(submission_id, "scored")]
        # The run cost its team one submission, once: the next upload is the second.
        answer = httpx.post(
            f"{base}{PHASE}/submissions",
            headers=world.auth("ada"),
            files={"file": ("p.zip", program(SLOW), "application/zip")},
        )
        assert answer.status_code == 202 and answer.json()["quota"]["total_used"] == 2, answer.text
        with sqlite3.connect(tmp_path / "podium.sqlite3") as db:
            attempts, worker = db.execute("SELECT attempts, worker FROM code_runs WHERE id = ?", (run_id,)).fetchone()
            (scores,) = db.execute("SELECT count(*) FROM scores WHERE submission_id = ?", (submission_id,)).fetchone()
        assert (attempts, worker, scores) == (2, f"remote:{view['credentials'][1]['id']}", 1)


def test_forged_and_replayed_results_are_refused_by_a_running_server(tmp_path: Path) -> None:
    world = World(tmp_path)
    with live_server(tmp_path, world.seed) as base:
        upload(base, world, program('json.dump({u: "0" for u in uuids}, (output / "predictions.json").open("w"))\n'))
        worker = {"Authorization": f"Bearer {world.secrets[0]}"}
        run = httpx.post(f"{base}/api/v1/worker/claim", headers=worker).json()["run"]
        assert run is not None
        inputs = httpx.get(base + run["inputs_url"]).content
        import csv
        import io
        import zipfile

        rows = csv.DictReader(
            io.StringIO(zipfile.ZipFile(io.BytesIO(inputs)).read("inputs.tsv").decode()), delimiter="\t"
        )
        predictions = json.dumps({row["uuid"]: "0" for row in rows}).encode()

        def send(lease: str, headers: dict[str, str]) -> httpx.Response:
            return httpx.post(
                f"{base}/api/v1/worker/runs/{run['run_id']}/result",
                headers=headers,
                data={"lease": lease, "report": json.dumps({"exit_code": 0})},
                files={"predictions": ("predictions.json", predictions)},
            )

        forged = send(f"{run['run_id']}.1.{'f' * 64}", worker)
        assert forged.status_code == 403 and forged.json()["error"] == "not_your_lease", forged.text
        other = send(run["lease"], {"Authorization": f"Bearer {world.secrets[1]}"})
        assert other.status_code == 403, other.text
        taken = send(run["lease"], worker)
        assert taken.status_code == 200 and taken.json()["status"] == "succeeded", taken.text
        replayed = send(run["lease"], worker)
        assert replayed.status_code == 409 and replayed.json()["error"] == "lease_lost", replayed.text


def test_podium_queue_manages_queues_credentials_and_routes(tmp_path: Path) -> None:
    world = World(tmp_path)

    def podium(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*podium_command(), *args], capture_output=True, text=True, timeout=60, check=False)

    with live_server(tmp_path, world.seed) as base:
        login = ["--server", base, "--token", world.tokens["olga"]]
        made = podium("queue", "create", "svident-code", "gpus", *login)
        assert made.returncode == 0, made.stderr
        out = tmp_path / "gpus.credential"
        issued = podium("queue", "credential", "svident-code", "gpus", "--label", "a100", "--out", str(out), *login)
        assert issued.returncode == 0, issued.stderr
        assert out.read_text().startswith("pwk_") and out.stat().st_mode & 0o777 == 0o600
        routed = podium("queue", "route", "svident-code/detection/test", "gpus", *login)
        assert routed.returncode == 0 and "runs go to gpus" in routed.stdout, routed.stderr
        listed = podium("queue", "list", "svident-code", *login)
        assert listed.returncode == 0, listed.stderr
        assert (
            "gpus: detection/test; 0 waiting" in listed.stdout and "a100: silent, last contact never" in listed.stdout
        )
        assert "lab: no phase" in listed.stdout
        back = podium("queue", "route", "svident-code/detection/test", "--platform", *login)
        assert back.returncode == 0 and "runs go to the platform" in back.stdout, back.stderr
        refused = podium("queue", "create", "svident-code", "gpus", *login)
        assert refused.returncode == 2 and "already has a queue named 'gpus'" in refused.stderr
        wrong = podium("queue", "create", "svident-code", "x", "--server", base, "--token", world.tokens["ada"])
        assert wrong.returncode == 2 and "only the organizers" in wrong.stderr
        no_credential = podium("worker", "--remote", base)
        assert no_credential.returncode == 2 and "no worker credential" in no_credential.stderr
