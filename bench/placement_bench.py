"""Placement benchmark: what runs that wait for a worker cost the worker that cannot run them.

Every claim of a code run first asks what the worker offers (``code.placement.offered``: the sandbox checked
again, so that a repaired one is seen at once; the GPUs found once per process). A run this worker cannot run
(here: a phase whose programs need a GPU, on an embedded server without one) is left untaken by the claim of its
message, and the sweeper sends it again at every sweep: "one sweep of N waiting runs" is the wall time of
``pool.sweep()`` until the pool is idle again, N messages each claiming nothing, in the embedded mode on SQLite.
Target: a few milliseconds per waiting run and sweep.

    .venv/bin/python bench/placement_bench.py [-n 20]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
import zipfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402

from app.config import Settings  # noqa: E402
from app.main import create_app  # noqa: E402
from app.services.accounts import users  # noqa: E402
from app.services.bundles.loader import load_bundle  # noqa: E402
from app.services.code.placement import offered  # noqa: E402
from app.services.competitions import catalog  # noqa: E402
from app.storage.db import Database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402
from bench.intake_bench import percentile  # noqa: E402

EXAMPLE = ROOT / "examples" / "svident-code"
PHASE = "/api/v1/competitions/svident-code/tasks/detection/phases/test"


def _program() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("predict.py", "print('never runs here')\n")
    return buffer.getvalue()


def offer_checks(n: int, settings: Settings) -> list[float]:
    """Milliseconds of ``n`` checks of what this worker offers (after a first one, which starts bubblewrap once)."""
    offered(settings)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        offered(settings)
        times.append((time.perf_counter() - start) * 1000)
    return times


def sweeps(n: int, work: Path) -> tuple[list[float], Settings]:
    """Milliseconds of ``n`` sweeps, each sending the ``n`` waiting GPU runs again until they are put back."""
    database = Database(f"sqlite:///{work / 'podium.sqlite3'}")
    upgrade(database.engine)
    spec = load_bundle(EXAMPLE)
    task = spec.tasks[0]
    assert task.phases[0].code is not None
    phase = replace(task.phases[0], code=replace(task.phases[0].code, gpu=True))
    spec = replace(spec, tasks=(replace(task, phases=(phase,)),))
    with database.session() as session:
        organizer = users.create_user(session, "bench-olga", "bench-password", is_organizer=True)
        catalog.create_competition(session, replace(spec, organizers=(organizer.name,)))
        tokens = [
            users.issue_token(session, users.create_user(session, f"bench-{i}", "bench-password")) for i in range(n)
        ]
        session.commit()
    settings = Settings(
        database_url=database.url,
        data_dir=work / "data",
        workers=1,
        secret_key="placement-bench",
        gpu_devices="none",
        sweep_seconds=3600,  # the bench sweeps itself
    )
    times = []
    with TestClient(create_app(settings)) as client:
        pool = client.app.state.podium.queue  # type: ignore[attr-defined]
        ids = []
        for token in tokens:
            answer = client.post(
                f"{PHASE}/submissions",
                headers={"Authorization": f"Bearer {token}"},
                files={"file": ("program.zip", _program(), "application/zip")},
            )
            assert answer.status_code == 202, answer.text
            ids.append(answer.json()["id"])
        assert pool.wait_idle(120)
        for _ in range(n):
            start = time.perf_counter()
            sent = pool.sweep()
            assert pool.wait_idle(120)
            times.append((time.perf_counter() - start) * 1000)
            assert len(sent.get("run_code", [])) == n, sent
        shown = client.get(f"/api/v1/submissions/{ids[0]}", headers={"Authorization": f"Bearer {tokens[0]}"}).json()
        assert (shown["status"], shown["code_run"]["waiting_for"]) == ("awaiting_run", "a GPU worker"), shown
    database.dispose()
    return times, settings


def table(n: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        swept, settings = sweeps(n, Path(tmp))
    checks = offer_checks(n, settings)
    per_run = [t / n for t in swept]
    return [
        f"date -u: {time.strftime('%a %b %d %H:%M:%S UTC %Y', time.gmtime())}, nproc {os.cpu_count()}, "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "| measure | runs | median | p90 |",
        "|---|---:|---:|---:|",
        f"| a claim's check of the worker's offer (sandbox, GPUs) | {n} | {statistics.median(checks):.1f} ms "
        f"| {percentile(checks, 0.9):.1f} ms |",
        f"| one sweep of {n} waiting GPU runs (each sent, left untaken) | {n} | {statistics.median(swept):.0f} ms "
        f"| {percentile(swept, 0.9):.0f} ms |",
        f"| the same, per waiting run | {n} | {statistics.median(per_run):.1f} ms "
        f"| {percentile(per_run, 0.9):.1f} ms |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20, help="waiting runs, sweeps and checks")
    print("\n".join(table(parser.parse_args().n)))


if __name__ == "__main__":
    main()
