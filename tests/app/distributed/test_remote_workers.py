"""Organizers' own workers beside the distributed mode: a ``podium serve`` process on PostgreSQL that sends its jobs
to Redis, the platform's Celery worker on the ``scoring`` queue, and a ``podium worker --remote`` process with
nothing but a credential of one competition's queue. One phase sends its program scoring to that queue, another
phase's stays on the platform: each submission is scored once, by the worker meant for it, although the Celery
worker also gets the message of the one it must leave to the organizers' worker."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from app.services.accounts import users
from app.services.competitions import catalog
from app.services.workers import queues
from app.storage.db import Database
from app.storage.models import Submission
from tests.app.builders import make_competition, make_user
from tests.app.distributed.cluster import ServeProcess, pids_of, podium_env, wait_for
from tests.app.distributed.conftest import Cluster
from tests.app.test_programs import TRUTH, program_phase
from tests.app.web.test_remote_worker_live import remote_worker
from tests.codalab import tiny

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here"),
]

TASK = "/api/v1/competitions/comp/tasks/labels/phases"


def row(db: Database, submission_id: int) -> Submission:
    with db.session(read_only=True) as session:
        found = session.get(Submission, submission_id)
        assert found is not None
        return found


@pytest.mark.timeout(300)
def test_a_remote_worker_scores_its_queues_phase_while_the_platforms_celery_worker_scores_the_rest(
    pg: Database, cluster: Cluster, tmp_path: Path
) -> None:
    with pg.session() as session:
        olga, ada = make_user(session, "olga", organizer=True), make_user(session, "ada")
        phases = (program_phase(slug="dev"), program_phase(slug="test"))
        make_competition(session, organizers=("olga",), phases=phases, scorer="program", scorer_options=tiny.OPTIONS)
        session.flush()
        queue = queues.create_queue(session, olga, catalog.get_competition(session, "comp"), "lab")
        queues.route_phase(session, olga, catalog.get_phase(session, "comp", "labels", "dev"), "lab", scoring=True)
        issued = queues.issue_credential(session, queue, "lab box")
        heads = {"Authorization": f"Bearer {users.issue_token(session, ada)}"}
        session.commit()
    celery = cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    server = ServeProcess(podium_env(cluster.settings), tmp_path / "serve.log").wait_ready()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            sent = {}
            for phase, prediction in (("dev", ["a", "b", "c", "a"]), ("test", TRUTH)):
                answer = client.post(
                    f"{TASK}/{phase}/submissions",
                    headers=heads,
                    files={"file": ("r.zip", tiny.result(prediction), "application/zip")},
                )
                assert answer.status_code == 202, answer.text
                sent[phase] = answer.json()["id"]
            wait_for(lambda: row(pg, sent["test"]).status == "scored", 120, "the platform to score its phase")
            # The Celery worker had the remote phase's message too, and left the submission waiting.
            assert row(pg, sent["dev"]).status == "queued"
            with remote_worker(server.url, issued.secret, tmp_path / "remote.log"):
                wait_for(lambda: row(pg, sent["dev"]).status in ("scored", "failed"), 120, "the remote worker to score")
            done = {phase: client.get(f"/api/v1/submissions/{i}", headers=heads).json() for phase, i in sent.items()}
    finally:
        server.stop()
    assert done["dev"]["metrics"] == {"accuracy": 0.5, "lines": 4.0}, (tmp_path / "remote.log").read_text()
    assert done["test"]["metrics"] == {"accuracy": 1.0, "lines": 4.0}
    remote, platform = row(pg, sent["dev"]), row(pg, sent["test"])
    assert (remote.worker, remote.attempts) == (queues.worker_name(issued.credential.id), 1)
    assert pids_of(platform.worker or "")[0] == celery.pid and platform.attempts == 1
