"""The commands that ``compose.yaml`` and the ``Dockerfile`` run, as real processes on the local
PostgreSQL and Redis: the web tier (``podium serve ... --no-migrate``), scoring and GPU workers,
the workers' health check (``podium worker --ping``), ``/healthz``, ``/readyz`` and ``/metrics``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import httpx
import pytest

from app.services.accounts import users
from app.storage.db import Database
from tests.app.builders import HALF, as_bytes
from tests.app.distributed.cluster import PODIUM, free_port, pid_of, podium_env, wait_for
from tests.app.distributed.conftest import PHASE, Cluster, setup_competition
from tests.app.labels_baselines import NAME as COPY
from tests.app.labels_scorer import LabelScorer
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture
def served(cluster: Cluster) -> Iterator[str]:
    """``podium serve --host 127.0.0.1 --port PORT --no-migrate`` (compose's web command) on the cluster."""
    port = free_port()
    log = (cluster.tmp / "serve.log").open("wb")
    process = subprocess.Popen(
        [PODIUM, "serve", "--host", "127.0.0.1", "--port", str(port), "--no-migrate"],
        cwd=ROOT,
        env=podium_env(cluster.settings),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        if process.poll() is not None:
            raise AssertionError((cluster.tmp / "serve.log").read_text())
        try:
            return httpx.get(f"{url}/healthz").status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_for(up, 90, "podium serve to answer /healthz", interval=0.2)
        yield url
    finally:
        process.terminate()
        process.wait(30)
        log.close()


def token_of(db: Database, name: str) -> str:
    with db.session() as session:
        user = users.find_user(session, name)
        assert user is not None
        token = users.issue_token(session, user)
        session.commit()
    return token


def ping(cluster: Cluster) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PODIUM, "worker", "--ping"],
        cwd=ROOT,
        env=podium_env(cluster.settings),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.timeout(300)
def test_the_compose_commands_serve_score_and_report(
    pg: Database, cluster: Cluster, labels: type[LabelScorer], served: str
) -> None:
    ada = setup_competition(pg)
    nobody = ping(cluster)
    assert nobody.returncode == 1
    assert "no worker on this machine answered" in nobody.stderr

    scoring = cluster.worker("--queues", "scoring", "--concurrency", "2")
    gpu = cluster.worker("--queues", "gpu")
    scoring.wait_ready()
    gpu.wait_ready()
    assert "concurrency: 2 (prefork)" in scoring.output()
    assert "concurrency: 1 (prefork)" in gpu.output()  # one job at a time on a GPU worker
    answered = ping(cluster)
    assert answered.returncode == 0, answered.stderr
    assert f"podium-scoring-{scoring.pid}@" in answered.stdout
    assert f"podium-gpu-{gpu.pid}@" in answered.stdout

    ready = httpx.get(f"{served}/readyz", timeout=60)
    assert (ready.status_code, ready.json()) == (200, {"status": "ready", "checks": {"database": "ok", "broker": "ok"}})
    files = {"file": ("run.json", as_bytes(HALF), "application/json")}
    answer = httpx.post(f"{served}{PHASE}/submissions", headers=ada, files=files, timeout=60)
    assert answer.status_code == 202, answer.text
    assert answer.json()["queue_position"] == 1
    url = f"{served}/api/v1/submissions/{answer.json()['id']}"
    wait_for(
        lambda: httpx.get(url, headers=ada, timeout=60).json()["status"] == "scored", 60, "the upload to be scored"
    )
    scored = httpx.get(url, headers=ada, timeout=60).json()
    assert (scored["metrics"], scored["queue_position"], scored["estimated_scored_at"]) == (
        {"accuracy": 0.5},
        None,
        None,
    )

    # A hosted baseline run goes to the gpu queue; its output is then scored on the scoring queue.
    olga = {"Authorization": f"Bearer {token_of(pg, 'olga')}"}
    body = {"baseline": COPY, "options": {}}
    run = httpx.post(f"{served}{PHASE}/baseline-runs", headers=olga, json=body, timeout=60)
    assert run.status_code == 202, run.text
    run_url = f"{served}/api/v1/baseline-runs/{run.json()['id']}"
    wait_for(
        lambda: httpx.get(run_url, headers=olga, timeout=60).json()["status"] == "succeeded", 60, "the baseline run"
    )
    done = httpx.get(run_url, headers=olga, timeout=60).json()
    assert pid_of(done["worker"]) == gpu.pid
    baseline = f"{served}/api/v1/submissions/{done['submission_id']}"
    wait_for(
        lambda: httpx.get(baseline, headers=olga, timeout=60).json()["status"] == "scored", 60, "its submission's score"
    )
    assert httpx.get(baseline, headers=olga, timeout=60).json()["metrics"] == {
        "accuracy": 1.0
    }  # training labels = gold

    metrics = httpx.get(f"{served}/metrics", timeout=60).text
    assert 'podium_submissions{status="scored"} 2.0' in metrics
    assert 'podium_queue_depth{queue="scoring"} 0.0' in metrics
    assert "podium_broker_up 1.0" in metrics
    assert 'podium_upload_to_score_seconds{quantile="0.5"}' in metrics
