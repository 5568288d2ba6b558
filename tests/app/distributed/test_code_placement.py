"""A code run on real Celery workers of the ``gpu`` queue: a worker whose sandbox cannot run it leaves it untaken
(never failed, counted once, its page saying what it waits for), the sweeper sends it again, and a worker that can
run it does, once."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import Settings
from app.storage.db import Database
from app.storage.models import CodeRun, Submission
from tests.app.distributed.cluster import WorkerProcess, podium_env, wait_for
from tests.app.distributed.conftest import Cluster, make_cluster
from tests.app.test_code_runs import ALL_ZERO, PHASE, create, program, used
from tests.app.web.test_api import auth

pytestmark = pytest.mark.slow


@pytest.fixture
def cluster(pg: Database, redis_url: str, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    yield from make_cluster(pg, redis_url, prefix, tmp_path)


def run_row(db: Database, submission_id: int) -> CodeRun:
    with db.session(read_only=True) as session:
        found = session.scalar(select(CodeRun).where(CodeRun.submission_id == submission_id))
        assert found is not None
        return found


@pytest.mark.timeout(300)
def test_a_run_put_back_by_a_worker_without_a_sandbox_runs_on_one_with_it(
    pg: Database, cluster: Cluster, web: Callable[[Settings], TestClient], tmp_path: Path
) -> None:
    # The first worker's runtime holds a file its sandbox's user cannot read: it can run no program.
    runtime = tmp_path / "runtime"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(runtime)], check=True)
    private = next((runtime / "lib").glob("python3*/site-packages")) / "private_module.py"
    private.write_text("x = 1\n")
    private.chmod(0o600)
    broken = {**cluster.settings, "PODIUM_PROGRAM_RUNTIMES": f'{{"*": "{runtime}"}}'}
    unable = WorkerProcess(["--queues", "gpu", "--concurrency", "1"], podium_env(broken), tmp_path / "unable.log")
    cluster.workers.append(unable)
    unable.wait_ready()
    create(pg)
    client = web(cluster.app_settings())
    ada = auth(pg, "ada")
    answer = client.post(
        f"{PHASE}/submissions",
        headers=ada,
        files={"file": ("program.zip", program(ALL_ZERO), "application/zip")},
    )
    assert answer.status_code == 202, answer.text
    submission = answer.json()["id"]
    wait_for(lambda: run_row(pg, submission).waiting_for != "", 60, "the worker to put the run back")
    shown = client.get(f"/api/v1/submissions/{submission}", headers=ada).json()
    assert (shown["status"], shown["code_run"]["waiting_for"]) == ("awaiting_run", "a worker that can run code")
    # The worker judged the run before taking it (its runtime's unreadable file found by the claim): never taken,
    # so never running there between sweeps with a page that says nothing of what it waits for.
    waiting = run_row(pg, submission)
    assert (waiting.status, waiting.attempts, waiting.worker) == ("queued", 0, None)
    # A worker that can run programs, and one that scores: the sweeper sends the run again until the able one
    # takes it.
    able = cluster.worker("--queues", "gpu", "--concurrency", "1").wait_ready()
    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()

    def scored() -> bool:
        with pg.session(read_only=True) as session:
            return session.scalar(select(Submission.status).where(Submission.id == submission)) == "scored"

    wait_for(scored, 180, "the run to be taken by the able worker and scored")
    done = run_row(pg, submission)
    assert (done.status, done.attempts, done.worker is not None) == ("succeeded", 1, True)
    assert done.worker is not None and f":{able.pid}/" in done.worker
    assert used(client, ada) == 1
