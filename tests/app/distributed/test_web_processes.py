"""Two ``podium serve`` processes behind one address (Debian's haproxy, round robin) share nothing but the
database, the blob store and the broker, and serve one consistent site: a login made through one works on
the other, uploads go through either and are scored by a real Celery worker, a board read through either
right after a score shows it, failed logins count across both and an ``Idempotency-Key`` names one upload
whichever process gets it again."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from app.storage.db import Database
from app.storage.models import Submission
from tests.app.builders import HALF, PASSWORD, PERFECT, as_bytes
from tests.app.distributed.cluster import PODIUM, ROOT, ServeProcess, podium_env, wait_for
from tests.app.distributed.conftest import PHASE, Cluster, setup_competition
from tests.app.distributed.proxy import BACKEND, HAPROXY, MISSING, HAProxy
from tests.app.labels_scorer import LabelScorer

BOARD = f"{PHASE}/leaderboard"


@pytest.fixture
def site(cluster: Cluster) -> Iterator[str]:
    """The proxy's address, in front of two web processes of the distributed mode."""
    if HAPROXY is None:
        pytest.skip(MISSING)
    servers = [ServeProcess(podium_env(cluster.settings), cluster.tmp / f"serve{n}.log").wait_ready() for n in (1, 2)]
    proxy = HAProxy([server.port for server in servers], cluster.tmp)
    try:
        yield proxy.url
    finally:
        proxy.stop()
        for server in servers:
            server.stop()


def csrf(page: httpx.Response) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found, page.text[:2000]
    return found.group(1)


def backends(*answers: httpx.Response) -> list[str]:
    return [answer.headers[BACKEND] for answer in answers]


def alternates(names: list[str]) -> bool:
    """Each answer came from the other process than the one before it."""
    return all(a != b for a, b in pairwise(names)) and len(set(names)) == 2


def board(client: httpx.Client, headers: dict[str, str]) -> tuple[str, list[tuple[int, int]]]:
    answer = client.get(BOARD, headers=headers)
    assert answer.status_code == 200, answer.text
    entries = [(entry["submission_id"], entry["scored_submissions"]) for entry in answer.json()["entries"]]
    return answer.headers[BACKEND], entries


def scored(client: httpx.Client, headers: dict[str, str], submission: int) -> bool:
    answer = client.get(f"/api/v1/submissions/{submission}", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] in ("queued", "running", "scored"), answer.text
    return bool(answer.json()["status"] == "scored")


def test_two_web_processes_behind_a_proxy_serve_one_consistent_site(
    pg: Database, cluster: Cluster, site: str, labels: type[LabelScorer]
) -> None:
    ada = setup_competition(pg)
    cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    with httpx.Client(base_url=site, timeout=60) as browser:
        # A login: its form from one process, its post to the other, then pages of both.
        form = browser.get("/login")
        done = browser.post("/login", data={"csrf_token": csrf(form), "name": "ada", "password": PASSWORD})
        assert done.status_code == 303, done.text
        pages = [browser.get("/account") for _ in range(4)]
        assert alternates(backends(form, done, *pages))
        assert all(page.status_code == 200 and "ada" in page.text for page in pages)

    with httpx.Client(base_url=site, timeout=60) as guesser:
        # Failed logins for one name, through both processes, count as one: the sixth is refused.
        token = csrf(guesser.get("/login"))
        answers = [
            guesser.post("/login", data={"csrf_token": token, "name": "olga", "password": "no"}) for _ in range(6)
        ]
        assert [answer.status_code for answer in answers] == [401] * 5 + [429]
        assert alternates(backends(*answers))
        assert answers[-1].headers["Retry-After"]

    with httpx.Client(base_url=site, timeout=60) as client:
        seen = [board(client, ada) for _ in range(2)]  # both processes have the empty board cached
        assert [entries for _, entries in seen] == [[], []]
        # One upload sent twice with one key, once to each process: one submission.
        key = {**ada, "Idempotency-Key": "run-1"}
        files = {"file": ("run.json", as_bytes(HALF))}
        first, again = (client.post(f"{PHASE}/submissions", headers=key, files=files) for _ in range(2))
        assert (first.status_code, again.status_code) == (202, 202), (first.text, again.text)
        assert first.json()["id"] == again.json()["id"]
        assert len(set(backends(first, again))) == 2
        with pg.session(read_only=True) as session:
            assert session.scalar(select(func.count()).select_from(Submission)) == 1

        for n, (submission, data) in enumerate(((first.json()["id"], None), (None, PERFECT)), 1):
            if data is not None:
                sent = client.post(f"{PHASE}/submissions", headers=ada, files={"file": ("run.json", as_bytes(data))})
                assert sent.status_code == 202, sent.text
                submission = sent.json()["id"]
            assert submission is not None

            def reported(submission: int = submission) -> bool:
                # Both processes read the board while the worker scores, as on a busy site (three requests a
                # poll, so that each poll's two reads go to both).
                board(client, ada)
                board(client, ada)
                return scored(client, ada, submission)

            wait_for(reported, 60, f"submission {submission} to be scored")
            # Right after the score is reported, a board read through either process shows it.
            read = [board(client, ada) for _ in range(2)]
            assert len({name for name, _ in read}) == 2
            assert [entries for _, entries in read] == [[(submission, n)]] * 2


def test_podium_serve_refuses_the_distributed_mode_without_a_secret_key(tmp_path: Path) -> None:
    # Refused before anything is reached: neither the database nor the broker needs to be there.
    settings = {
        "PODIUM_DATABASE_URL": f"sqlite:///{tmp_path / 'podium.sqlite3'}",
        "PODIUM_BROKER_URL": "redis://127.0.0.1:1/0",
    }
    served = subprocess.run(
        [PODIUM, "serve", "--host", "127.0.0.1", "--port", "0", "--no-migrate"],
        cwd=ROOT,
        env=podium_env(settings),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.returncode == 2, served.stdout + served.stderr
    assert served.stderr.strip().splitlines() == [
        "PODIUM_SECRET_KEY is not set: with PODIUM_BROKER_URL every web process must sign session cookies "
        "with the same key (e.g. PODIUM_SECRET_KEY=$(openssl rand -hex 32))"
    ]
