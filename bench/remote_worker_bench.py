"""Remote worker benchmark: what the protocol of a competition's own worker costs the server, per call.

An embedded server on SQLite (``TestClient``, no network) with the SV-Ident code example routed to a queue of
its competition and ``n`` programs waiting there. One worker credential then does what ``podium worker --remote``
does for each run, each call timed on its own: ``claim`` (the fairest waiting run of the queue, taken under a
lease, with its signed links), the two file fetches, a ``heartbeat``, and the ``result`` (predictions checked
against the public view, stored, the scoring job queued); and ``idle claim``, an idle worker's poll (nothing
waits), which each worker sends every ``--poll`` seconds. Then the same for a phase that sends its program scoring
to the queue: ``scoring claim`` (the fairest submission waiting to be scored, with its links), the fetches of the
submitted file and of the gold (the scoring program and the reference data), a heartbeat and the ``scoring result``
(the scores read through the phase's columns and stored). Medians and 95th percentiles in milliseconds. No program
is run here (the sandbox's own cost is in ``sandbox_bench.py`` and ``code_run_bench.py``).

    .venv/bin/python bench/remote_worker_bench.py [-n 30]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402

from app.config import Settings  # noqa: E402
from app.main import create_app  # noqa: E402
from app.services.accounts import users  # noqa: E402
from app.services.bundles.loader import load_bundle  # noqa: E402
from app.services.competitions import catalog  # noqa: E402
from app.services.workers import queues  # noqa: E402
from app.storage.db import Database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402
from bench.intake_bench import percentile  # noqa: E402

EXAMPLE = ROOT / "examples" / "svident-code"
PHASE = "/api/v1/competitions/svident-code/tasks/detection/phases/test"
WORKER = "/api/v1/worker"


def _program() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("predict.py", "print('never runs here')\n")
    return buffer.getvalue()


def _seed(db: Database, n: int) -> tuple[str, str]:
    """The competition, its queue with the phase routed there and a credential; returns (credential, token)."""
    with db.session() as session:
        olga = users.create_user(session, "olga", "a long enough password", is_organizer=True)
        ada = users.create_user(session, "ada", "a long enough password")
        spec = load_bundle(EXAMPLE)
        from dataclasses import replace

        task = spec.tasks[0]
        phase = replace(task.phases[0], total_limit=None, daily_limit=None)
        catalog.create_competition(
            session, replace(spec, organizers=("olga",), tasks=(replace(task, phases=(phase,)),))
        )
        session.flush()
        competition = catalog.get_competition(session, "svident-code")
        queue = queues.create_queue(session, olga, competition, "lab")
        queues.route_phase(session, olga, catalog.get_phase(session, "svident-code", "detection", "test"), "lab")
        secret = queues.issue_credential(session, queue, "bench").secret
        token = users.issue_token(session, ada)
        session.commit()
    return secret, token


def _timed(times: dict[str, list[float]], name: str, call: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    answer = call()
    times.setdefault(name, []).append((time.perf_counter() - start) * 1000)
    assert answer.status_code == 200, (name, answer.status_code, answer.text[:300])
    return answer


def _serve_one(client: TestClient, worker: dict[str, str], times: dict[str, list[float]]) -> None:
    """What ``podium worker --remote`` says to the server for one run (the program not run: its output made up)."""
    run = _timed(times, "claim", lambda: client.post(f"{WORKER}/claim", headers=worker, json={})).json()["run"]
    _timed(times, "fetch program", lambda: client.get(run["program_url"]))
    inputs = _timed(times, "fetch inputs", lambda: client.get(run["inputs_url"])).content
    beat = {"lease": run["lease"]}
    _timed(
        times, "heartbeat", lambda: client.post(f"{WORKER}/runs/{run['run_id']}/heartbeat", headers=worker, json=beat)
    )
    rows = csv.DictReader(io.StringIO(zipfile.ZipFile(io.BytesIO(inputs)).read("inputs.tsv").decode()), delimiter="\t")
    predictions = json.dumps({row["uuid"]: "0" for row in rows}).encode()
    form = {"lease": run["lease"], "report": json.dumps({"exit_code": 0, "wall_seconds": 1.0})}
    files = {"predictions": ("predictions.json", predictions), "stdout": ("o", b""), "stderr": ("e", b"")}
    url = f"{WORKER}/runs/{run['run_id']}/result"
    _timed(times, "result", lambda: client.post(url, headers=worker, data=form, files=files))


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


#: A program-scored phase's options, as a CodaLab import gives them.
PROGRAM_OPTIONS = {"metrics": [{"key": "accuracy", "title": "Accuracy"}], "image": ""}


def _seed_program(db: Database) -> tuple[str, str]:
    """A competition whose one phase is scored by its program, on a queue of its own; (credential, token)."""
    from scorers.generic.program import pack_gold
    from tests.app.builders import bundle_file, competition_spec, phase_spec

    program = _zip({"metadata": b"command: python3 $program/score.py $input $output\n", "score.py": b"pass\n"})
    gold = pack_gold(program, _zip({"truth.txt": b"a\nb\n"}))
    phase = phase_spec(gold=bundle_file("gold.zip", gold), public_files=())
    spec = competition_spec(
        "scored", phases=(phase,), scorer="program", scorer_options=PROGRAM_OPTIONS, organizers=("olga",)
    )
    with db.session() as session:
        olga = users.find_user(session, "olga")
        ada = users.find_user(session, "ada")
        assert olga is not None and ada is not None
        catalog.create_competition(session, spec)
        session.flush()
        queue = queues.create_queue(session, olga, catalog.get_competition(session, "scored"), "lab")
        queues.route_phase(session, olga, catalog.get_phase(session, "scored", "labels", "dev"), "lab", scoring=True)
        secret = queues.issue_credential(session, queue, "bench").secret
        token = users.issue_token(session, ada)
        session.commit()
    return secret, token


def _score_one(client: TestClient, worker: dict[str, str], times: dict[str, list[float]]) -> None:
    """What ``podium worker --remote`` says to the server for one scoring (the program not run)."""
    claim = _timed(times, "scoring claim", lambda: client.post(f"{WORKER}/claim", headers=worker, json={}))
    job = claim.json()["scoring"]
    _timed(times, "fetch submission", lambda: client.get(job["submission_url"]))
    _timed(times, "fetch gold", lambda: client.get(job["gold_url"]))
    url = f"{WORKER}/scorings/{job['submission_id']}"
    beat = {"lease": job["lease"]}
    _timed(times, "scoring heartbeat", lambda: client.post(f"{url}/heartbeat", headers=worker, json=beat))
    form = {"lease": job["lease"], "report": json.dumps({"scores": {"accuracy": 0.5}, "exit_code": 0})}
    files = {"stdout": ("o", b""), "stderr": ("e", b"")}
    _timed(times, "scoring result", lambda: client.post(f"{url}/result", headers=worker, data=form, files=files))


def run(n: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
        db = Database(url)
        upgrade(db.engine)
        secret, token = _seed(db, n)
        settings = Settings(database_url=url, workers=1, data_dir=Path(folder), secret_key="bench")
        times: dict[str, list[float]] = {}
        with TestClient(create_app(settings)) as client:
            worker = {"Authorization": f"Bearer {secret}"}
            for _ in range(n):
                answer = client.post(
                    f"{PHASE}/submissions",
                    headers={"Authorization": f"Bearer {token}"},
                    files={"file": ("p.zip", _program(), "application/zip")},
                )
                assert answer.status_code == 202, answer.text
            for _ in range(n):
                _serve_one(client, worker, times)
            for _ in range(n):
                _timed(times, "idle claim", lambda: client.post(f"{WORKER}/claim", headers=worker, json={}))
            scorer_secret, scorer_token = _seed_program(db)
            scorer = {"Authorization": f"Bearer {scorer_secret}"}
            for _ in range(n):
                answer = client.post(
                    "/api/v1/competitions/scored/tasks/labels/phases/dev/submissions",
                    headers={"Authorization": f"Bearer {scorer_token}"},
                    files={"file": ("r.zip", _zip({"prediction.txt": b"a\nb\n"}), "application/zip")},
                )
                assert answer.status_code == 202, answer.text
            for _ in range(n):
                _score_one(client, scorer, times)
            client.app.state.podium.queue.wait_idle(120)  # type: ignore[attr-defined]
        db.dispose()
    return times


NAMES = (
    "claim",
    "fetch program",
    "fetch inputs",
    "heartbeat",
    "result",
    "idle claim",
    "scoring claim",
    "fetch submission",
    "fetch gold",
    "scoring heartbeat",
    "scoring result",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=30, help="runs waiting on the queue (and calls of each kind)")
    args = parser.parse_args()
    times = run(args.n)
    print(f"remote worker protocol, {args.n} runs waiting on one competition's queue, embedded server on SQLite")
    print(f"{'call':<16}{'median ms':>12}{'p95 ms':>10}")
    for name in NAMES:
        values = times[name]
        print(f"{name:<16}{statistics.median(values):>12.1f}{percentile(values, 0.95):>10.1f}")


if __name__ == "__main__":
    main()
