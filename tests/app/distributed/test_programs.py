"""Scoring programs with real Celery workers: a Codabench bundle imported over the API is scored by a worker
with the numbers its program prints by hand, and a worker killed mid-program takes its sandbox with it while
the job resumes on another worker, scored once and counted once."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import Settings
from app.services.accounts import users
from app.services.submissions import quota
from app.storage.db import Database
from app.storage.models import Phase, ProgramRun, Score, Submission
from app.storage.types import utcnow
from sandbox.cleanup import LOCK
from scorers.generic.program import pack_gold
from tests.app.builders import bundle_file, make_user, phase_spec
from tests.app.distributed.cluster import pids_of, wait_for
from tests.app.distributed.conftest import PHASE, Cluster, make_cluster, setup_competition
from tests.codalab import tiny
from tests.codalab.reference import bundle, by_hand, legacy_runtime, runtimes_table, v2_result
from tests.conftest import require_shared

pytestmark = pytest.mark.slow

TRUTH = ["a", "b", "a", "c"]


def row(db: Database, submission_id: int) -> Submission:
    with db.session(read_only=True) as session:
        found = session.get(Submission, submission_id)
        assert found is not None
        return found


@pytest.fixture
def program_cluster(pg: Database, redis_url: str, prefix: str, tmp_path: Path) -> Iterator[Cluster]:
    """A cluster whose workers run the legacy runtime for CodaLab's images, with leases of 3 s."""
    yield from make_cluster(pg, redis_url, prefix, tmp_path, lease_seconds="3", program_runtimes=runtimes_table())


def sandboxes_with(marker: str, *, program: bool = False) -> list[int]:
    """The processes whose command line holds ``marker`` (the sandbox's, and with ``program`` the program's own,
    whose command is ``python3``: the sandbox has started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in line and (not program or line.startswith(b"python3\0")):
                found.append(int(entry.name))
    return found


def folders_held_by(pid: int) -> set[Path]:
    """The run folders that process ``pid`` or a process below it holds (their lock file open: ``run_folder``)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parents[int(entry.name)] = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
    family, grown = {pid}, True
    while grown:
        below = {child for child, parent in parents.items() if parent in family} - family
        family |= below
        grown = bool(below)
    found = set()
    for member in family:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{member}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = Path(os.readlink(fd))
                    if target.name == LOCK:
                        found.add(target.parent)
    return found


@pytest.mark.timeout(400)
def test_a_codabench_bundle_sent_to_the_web_tier_is_scored_by_a_worker_as_by_hand(
    pg: Database, program_cluster: Cluster, web: Callable[[Settings], TestClient], tmp_path: Path
) -> None:
    with pg.session() as session:
        olga = make_user(session, "olga", organizer=True)
        ada = make_user(session, "ada")
        heads = {u.name: {"Authorization": f"Bearer {users.issue_token(session, u)}"} for u in (olga, ada)}
        session.commit()
    program_cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    client = web(program_cluster.app_settings())
    data = require_shared("reference", "codabench", "competition_v2_multi_task.zip").read_bytes()
    created = client.post("/api/v1/competitions", headers=heads["olga"], files={"bundle": ("b.zip", data)})
    assert created.status_code == 201, created.text
    slug = created.json()["slug"]
    assert client.post(f"/api/v1/competitions/{slug}/participation", headers=heads["ada"]).status_code == 200
    assert (
        client.post(f"/api/v1/competitions/{slug}/participants/ada/approve", headers=heads["olga"]).status_code == 200
    )

    folder = bundle("competition_v2_multi_task.zip", tmp_path / "bundle")
    result = v2_result(folder, "third", 2.5)
    expected = by_hand(folder / "scoring_program", folder / "third" / "reference_data", result, legacy_runtime())
    phase = f"/api/v1/competitions/{slug}/tasks/wheat-seed-third-task/phases/single-phase-with-multiple-task"
    sent = client.post(f"{phase}/submissions", headers=heads["ada"], files={"file": ("r.zip", result)})
    assert sent.status_code == 202, sent.text
    submission_id = sent.json()["id"]
    wait_for(lambda: row(pg, submission_id).status in ("scored", "failed"), 300, "the worker to score it")
    done = client.get(f"/api/v1/submissions/{submission_id}", headers=heads["ada"]).json()
    assert (done["status"], done["metrics"]) == ("scored", expected)
    assert expected == {"accuracy": 1.0, "duration": 2.5}
    assert pids_of(row(pg, submission_id).worker or "")[0] == program_cluster.workers[0].pid


@pytest.mark.timeout(300)
def test_a_worker_killed_mid_program_takes_its_sandbox_along_and_another_worker_scores_once(
    pg: Database, program_cluster: Cluster, web: Callable[[Settings], TestClient]
) -> None:
    marker = f"podium-test-{uuid.uuid4().hex}"
    slow = tiny.SCORE_PY.replace(b"import os, sys\n", b"import os, sys, time\ntime.sleep(4)\n", 1)
    metadata = f"command: python3 $program/score.py $input $output {marker}\n".encode()
    gold = pack_gold(tiny.program(slow, metadata), tiny.zip_of({"truth.txt": "\n".join(TRUTH).encode()}))
    phase = phase_spec(gold=bundle_file("gold.zip", gold), public_files=(), total_limit=2)
    ada = setup_competition(pg, scorer="program", scorer_options=tiny.OPTIONS, phases=(phase,))
    first = program_cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    client = web(program_cluster.app_settings())
    sent = client.post(f"{PHASE}/submissions", headers=ada, files={"file": ("r.zip", tiny.result(TRUTH))})
    assert sent.status_code == 202, sent.text
    submission_id = sent.json()["id"]

    wait_for(lambda: bool(sandboxes_with(marker, program=True)), 60, "the first worker's program to start")
    assert row(pg, submission_id).status == "running"
    folders = folders_held_by(first.pid)
    assert folders and all(folder.is_dir() for folder in folders), folders
    first.kill()  # mid-program: the worker and its pool child die at once
    wait_for(lambda: not sandboxes_with(marker), 30, "the sandbox to die with its worker")

    second = program_cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    wait_for(lambda: row(pg, submission_id).status == "scored", 120, "the second worker to score it")
    done = row(pg, submission_id)
    assert done.worker is not None and pids_of(done.worker)[0] == second.pid
    assert (done.attempts, done.quota_refunded) == (2, False)
    with pg.session(read_only=True) as session:
        scores = list(session.scalars(select(Score).where(Score.submission_id == submission_id)))
        runs = list(session.scalars(select(ProgramRun).where(ProgramRun.submission_id == submission_id)))
        phase_row = session.get(Phase, done.phase_id)
        assert phase_row is not None
        usage = quota.usage(session, phase_row, done.team_id, utcnow())
    assert [(s.round, s.metrics) for s in scores] == [(1, {"accuracy": 1.0, "lines": 4.0})]
    assert [(r.round, r.exit_code) for r in runs] == [(1, 0)]
    assert (usage.total_used, usage.total_left) == (1, 1)
    # The killed run's folder (its unpacked program, reference data and submission) went with the next run.
    assert not any(folder.exists() for folder in folders), folders
