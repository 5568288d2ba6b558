"""Intake benchmark: N concurrent uploads of a realistic submission to a running ``podium serve``.

For each database (SQLite in a temporary folder; PostgreSQL too with ``--postgres URL``, on a fresh
database created there and dropped afterwards) the benchmark creates a competition whose phase is
scored with a seed scorer on test-size gold, N users with tokens, starts ``podium serve`` as its own
process (embedded pool of ``--workers`` threads), sends the N uploads at once from N client threads,
and waits until every submission is scored. It prints

* accepted/s: uploads answered 202 per second, from the first upload sent to the last answer;
* the p50 and p99 time from sending an upload to its submission being ``scored`` (the server's
  ``finished_at``; client and server share one clock).

Before the burst, ``--idle M`` uploads are sent one at a time to the idle server, each only once the one before
it is scored: their p50 and p99 are what one participant waits for when nobody else uploads (the row "idle").

The default submission is an SV-Ident detection run (a label for each sentence of ``svident/val.tsv``
under the shared data folder, 80 % of them right), or on the example data when that is missing.

    .venv/bin/python bench/intake_bench.py [-n 50] [--idle 20] [--workers 2] [--postgres postgresql+psycopg://postgres@127.0.0.1/podium]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from sqlalchemy import select

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from app.services.accounts import users  # noqa: E402
from app.services.bundles.spec import BundleFile, CompetitionSpec, PhaseSpec, TaskSpec  # noqa: E402
from app.services.competitions import catalog  # noqa: E402
from app.storage.db import Database, scratch_database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402
from app.storage.models import Submission  # noqa: E402

SHARED_GOLD = ROOT.parent / "shared" / "data" / "svident" / "val.tsv"
EXAMPLE_GOLD = ROOT / "examples" / "svident" / "data" / "test.tsv"
PASSWORD = "bench password"


@dataclass(frozen=True)
class Result:
    backend: str
    mode: str
    uploads: int
    accepted: int
    refused: int
    failed: int
    accepted_per_s: float
    p50_s: float
    p99_s: float


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def submission_for(gold: bytes, seed: int = 7) -> bytes:
    """A plausible detection run: every gold sentence labelled, 80 % of them correctly."""
    rows = list(csv.DictReader(io.StringIO(gold.decode("utf-8")), delimiter="\t"))
    rng = random.Random(seed)
    labels = {r["uuid"]: r["is_variable"] if rng.random() < 0.8 else str(1 - int(r["is_variable"])) for r in rows}
    return json.dumps(labels).encode()


def spec(gold: bytes) -> CompetitionSpec:
    file = BundleFile("gold.tsv", gold, hashlib.sha256(gold).hexdigest())
    phase = PhaseSpec("test", "Test", "", None, None, file, (), None, None, "public", "best", None)
    task = TaskSpec("detection", "Detection", "", "svident-detection", {}, (), (), (phase,))
    return CompetitionSpec("bench", "Intake benchmark", "", (), "open", (task,))


def prepare(url: str, gold: bytes, n: int) -> list[str]:
    """Migrate, create the competition and ``n`` users; returns their tokens."""
    database = Database(url)
    upgrade(database.engine)
    hashed = users.hash_password(PASSWORD)
    tokens = []
    with database.session() as session:
        catalog.create_competition(session, spec(gold))
        for i in range(n):
            user = users.create_user(session, f"bench-{i}", PASSWORD, password_hash=hashed)
            tokens.append(users.issue_token(session, user))
        session.commit()
    database.dispose()
    return tokens


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server(url: str, workers: int) -> Iterator[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODIUM_")}
    env.update(PODIUM_DATABASE_URL=url, PODIUM_WORKERS=str(workers))
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/api/v1/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("podium serve did not start")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(30)


def finished_at(database: Database, submission_id: int, timeout: float = 120.0) -> float | None:
    """When the submission was scored (the server's clock), polled every 5 ms; None if it failed or took too long."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with database.session(read_only=True) as session:
            row = session.execute(
                select(Submission.status, Submission.finished_at).where(Submission.id == submission_id)
            ).one()
        if row.status == "scored":
            return float(row.finished_at.timestamp())
        if row.status == "failed":
            return None
        time.sleep(0.005)
    return None


def idle_uploads(backend: str, base: str, url: str, token: str, data: bytes, m: int) -> Result:
    """``m`` uploads, each sent once the one before it is scored: the wait of one participant on an idle server."""
    target = f"{base}/api/v1/competitions/bench/tasks/detection/phases/test/submissions"
    database = Database(url)
    latencies, accepted, failed = [], 0, 0
    with httpx.Client(timeout=300) as client:
        for _ in range(m):
            start = time.time()
            response = client.post(
                target, headers={"Authorization": f"Bearer {token}"}, files={"file": ("run.json", data)}
            )
            if response.status_code != 202:
                continue
            accepted += 1
            finished = finished_at(database, response.json()["id"])
            if finished is None:
                failed += 1
            else:
                latencies.append(finished - start)
    database.dispose()
    return Result(
        backend=backend,
        mode="idle",
        uploads=m,
        accepted=accepted,
        refused=m - accepted,
        failed=failed,
        accepted_per_s=float("nan"),
        p50_s=percentile(latencies, 0.5),
        p99_s=percentile(latencies, 0.99),
    )


def run(backend: str, url: str, n: int, workers: int, gold: bytes, idle: int = 0) -> list[Result]:
    tokens = prepare(url, gold, n + 1)
    data = submission_for(gold)
    sent: dict[int, float] = {}
    answers: list[tuple[float, int, int | None]] = []
    lock = threading.Lock()
    barrier = threading.Barrier(n)
    results = []
    with server(url, workers) as base:
        if idle:
            results.append(idle_uploads(backend, base, url, tokens.pop(), data, idle))
            with Database(url).session() as session:  # the burst is timed on its own submissions
                sent_before = {row for (row,) in session.execute(select(Submission.id))}
        else:
            sent_before = set()
            tokens.pop()
        target = f"{base}/api/v1/competitions/bench/tasks/detection/phases/test/submissions"

        def upload(token: str) -> None:
            with httpx.Client(timeout=300) as client:
                barrier.wait()
                start = time.time()
                response = client.post(
                    target, headers={"Authorization": f"Bearer {token}"}, files={"file": ("run.json", data)}
                )
                submission_id = response.json().get("id") if response.status_code == 202 else None
                with lock:
                    answers.append((time.time(), response.status_code, submission_id))
                    if submission_id is not None:
                        sent[submission_id] = start

        threads = [threading.Thread(target=upload, args=(token,)) for token in tokens]
        first = time.time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        last = max(t for t, _, _ in answers)
        database = Database(url)
        deadline = time.monotonic() + 600
        while True:
            with database.session(read_only=True) as session:
                rows = session.execute(select(Submission.id, Submission.status, Submission.finished_at)).all()
            rows = [row for row in rows if row[0] not in sent_before]
            if all(status in ("scored", "failed") for _, status, _ in rows) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        database.dispose()
    latencies = [finished.timestamp() - sent[i] for i, status, finished in rows if status == "scored"]
    accepted = len(sent)
    results.append(
        Result(
            backend=backend,
            mode=f"burst of {n}",
            uploads=n,
            accepted=accepted,
            refused=n - accepted,
            failed=sum(1 for _, status, _ in rows if status != "scored"),
            accepted_per_s=accepted / (last - first) if last > first else float("nan"),
            p50_s=percentile(latencies, 0.5),
            p99_s=percentile(latencies, 0.99),
        )
    )
    return results


def postgres_database(server_url: str) -> AbstractContextManager[str]:
    return scratch_database(server_url, "podium_bench")


def render(results: list[Result], n: int, workers: int, gold_name: str, size: int) -> str:
    lines = [
        f"{n} concurrent uploads of a {size / 1024:.0f} KB svident-detection run ({gold_name}); "
        f"{workers} scoring threads; {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}",
        "",
        "| database | mode | uploads | accepted | failed | accepted/s | upload to scored p50 | p99 |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        rate = "" if r.accepted_per_s != r.accepted_per_s else f"{r.accepted_per_s:.1f}"  # NaN for one at a time
        lines.append(
            f"| {r.backend} | {r.mode} | {r.uploads} | {r.accepted} | {r.failed} | {rate} "
            f"| {r.p50_s:.2f} s | {r.p99_s:.2f} s |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=50, help="concurrent uploads (one user each)")
    parser.add_argument("--idle", type=int, default=20, help="uploads sent one at a time before the burst (0: none)")
    parser.add_argument("--workers", type=int, default=2, help="threads of the server's scoring pool")
    parser.add_argument("--postgres", help="a PostgreSQL server URL; a fresh database is made there")
    parser.add_argument("--gold", type=Path, help="an SV-Ident TSV (default: the shared val.tsv)")
    args = parser.parse_args()
    gold_path = args.gold or (SHARED_GOLD if SHARED_GOLD.is_file() else EXAMPLE_GOLD)
    gold = gold_path.read_bytes()
    results = []
    with tempfile.TemporaryDirectory(prefix="podium-bench-") as tmp:
        results += run("SQLite", f"sqlite:///{tmp}/podium.sqlite3", args.n, args.workers, gold, args.idle)
    if args.postgres:
        with postgres_database(args.postgres) as url:
            results += run("PostgreSQL", url, args.n, args.workers, gold, args.idle)
    print(render(results, args.n, args.workers, gold_path.name, len(submission_for(gold))))


if __name__ == "__main__":
    main()
