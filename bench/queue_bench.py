"""Queue benchmark: a burst of N submissions scored by 1, then 2, ``podium worker`` processes.

For each number of workers the benchmark makes a fresh database on the local PostgreSQL (dropped
afterwards), a competition scored with a seed scorer on test-size gold, and starts that many
``podium worker --queues scoring --concurrency 1`` processes on the local Redis (queue names of its
own, deleted afterwards). Once they are ready and warm (a few submissions each, not measured), N
submissions of one validated file arrive at one instant: one transaction stores them ``queued``,
and after its commit each job is sent to the broker, as uploads are. It prints

* throughput: N divided by the seconds from the burst's commit to the last ``scored``;
* the p50 and p99 time from upload to score (``finished_at - created_at``, one clock);
* the ratio of the throughputs, 2 workers / 1 worker (the target is at least 1.8).

The upload path (validation, limits) is measured by ``bench/intake_bench.py``; this one measures
the queue and the workers. Defaults: an SV-Ident detection run (``svident/val.tsv`` under the
shared data folder, else the example data), N = 200.

    .venv/bin/python bench/queue_bench.py [-n 200] [--workers 1,2] [--write]
"""

from __future__ import annotations

import argparse
import math
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import redis
from sqlalchemy import func, select

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from app.config import Settings  # noqa: E402
from app.services.competitions import catalog  # noqa: E402
from app.services.jobs.enqueue import enqueue_after_commit  # noqa: E402
from app.services.jobs.kinds import QUEUE_KEY  # noqa: E402
from app.services.scoring.job import SCORE_SUBMISSION  # noqa: E402
from app.storage.blobs import put_blob, sha256_hex  # noqa: E402
from app.storage.db import Database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402
from app.storage.models import Phase, Score, Submission  # noqa: E402
from app.storage.types import utcnow  # noqa: E402
from app.worker.celery_app import make_celery  # noqa: E402
from app.worker.celery_queue import CeleryQueue  # noqa: E402
from bench.intake_bench import EXAMPLE_GOLD, SHARED_GOLD, postgres_database, spec, submission_for  # noqa: E402
from bench.results_md import replace_section  # noqa: E402

RESULTS = ROOT / "bench" / "RESULTS.md"
SECTION = "## Queue (bench/queue_bench.py)"
WARM_UP = 4  # submissions per worker before the measured burst: imports, gold parsed once per process


@dataclass(frozen=True)
class Run:
    workers: int
    submissions: int
    seconds: float
    p50_s: float
    p99_s: float
    mean_scoring_s: float

    @property
    def throughput(self) -> float:
        return self.submissions / self.seconds if self.seconds > 0 else float("nan")


def nearest_rank(values: list[float], q: float) -> float:
    """The ``q`` quantile by the nearest-rank rule (the value at rank ceil(q * n))."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = math.ceil(round(q * len(ordered), 9))  # round first: 0.07 * 100 is 7.000000000000001
    return ordered[min(max(rank, 1), len(ordered)) - 1]


def summarize(workers: int, committed_at: datetime, rows: list[tuple[datetime, datetime, datetime]]) -> Run:
    """A run from its burst's commit instant and each submission's (created, started, finished)."""
    waits = [(finished - created).total_seconds() for created, _, finished in rows]
    scoring = [(finished - started).total_seconds() for _, started, finished in rows]
    last = max(finished for *_, finished in rows)
    return Run(
        workers=workers,
        submissions=len(rows),
        seconds=(last - committed_at).total_seconds(),
        p50_s=nearest_rank(waits, 0.5),
        p99_s=nearest_rank(waits, 0.99),
        mean_scoring_s=sum(scoring) / len(scoring),
    )


def podium_command() -> list[str]:
    script = Path(sys.executable).with_name("podium")
    return [str(script)] if script.exists() else [sys.executable, "-m", "app.cli"]


@contextmanager
def workers(count: int, env: dict[str, str], logs: Path) -> Iterator[None]:
    """``count`` worker processes, ready, stopped afterwards."""
    started = []
    for n in range(count):
        log = (logs / f"worker{n}.log").open("wb")
        command = [*podium_command(), "worker", "--queues", "scoring", "--concurrency", "1"]
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        started.append((process, log, logs / f"worker{n}.log"))
    try:
        deadline = time.monotonic() + 120
        for process, _, path in started:
            while " ready." not in path.read_text(errors="replace"):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"a worker did not start:\n{path.read_text(errors='replace')[-3000:]}")
                time.sleep(0.1)
        yield
    finally:
        for process, _, _ in started:
            process.terminate()
        for process, log, _ in started:
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
            log.close()


def burst(db: Database, queue: CeleryQueue, phase_id: int, data: bytes, n: int) -> tuple[list[int], datetime]:
    """Store ``n`` queued submissions of ``data`` in one transaction, then send their jobs (after the
    commit, as uploads do); returns their ids and the commit instant."""
    with db.session(info={QUEUE_KEY: queue}) as session:
        digest = sha256_hex(data)
        blob = put_blob(session, data, digest)
        now = utcnow()
        rows = [
            Submission(
                phase_id=phase_id,
                team_id=None,
                is_baseline=True,  # no team needed: the benchmark measures the queue, not the quota
                baseline_name="bench",
                blob_id=blob.id,
                sha256=digest,
                size=len(data),
                original_name="run.json",
                status="queued",
                created_at=now,
            )
            for _ in range(n)
        ]
        session.add_all(rows)
        session.flush()
        for row in rows:
            enqueue_after_commit(session, SCORE_SUBMISSION, row.id)
        session.commit()
        return [row.id for row in rows], now


def wait_scored(db: Database, ids: list[int], timeout: float) -> list[tuple[datetime, datetime, datetime]]:
    deadline = time.monotonic() + timeout
    query = select(Submission.created_at, Submission.started_at, Submission.finished_at, Submission.status)
    while True:
        with db.session(read_only=True) as session:
            rows = session.execute(query.where(Submission.id.in_(ids))).all()
        statuses = {row.status for row in rows}
        if statuses <= {"scored", "failed"}:
            if "failed" in statuses:
                raise RuntimeError("some submissions failed; see the workers' logs")
            with db.session(read_only=True) as session:
                scores = session.scalar(select(func.count()).where(Score.submission_id.in_(ids)))
            if scores != len(ids):
                raise RuntimeError(f"{scores} scores for {len(ids)} submissions: each must be scored exactly once")
            return [(row.created_at, row.started_at, row.finished_at) for row in rows]
        if time.monotonic() > deadline:
            raise RuntimeError(f"not all {len(ids)} submissions were scored within {timeout:g} s")
        time.sleep(0.2)


def run(count: int, n: int, postgres: str, broker: str, gold: bytes, logs: Path) -> Run:
    prefix = f"podium-bench-{secrets.token_hex(4)}-"
    with postgres_database(postgres) as url:
        db = Database(url)
        upgrade(db.engine)
        with db.session() as session:
            catalog.create_competition(session, spec(gold))
            session.commit()
            phase_id = session.scalars(select(Phase.id)).one()
        settings = Settings(database_url=url, broker_url=broker, queue_prefix=prefix)
        queue = CeleryQueue(make_celery(settings), db, settings)
        env = {key: value for key, value in os.environ.items() if not key.startswith("PODIUM_")}
        env.update(PODIUM_DATABASE_URL=url, PODIUM_BROKER_URL=broker, PODIUM_QUEUE_PREFIX=prefix)
        data = submission_for(gold)
        try:
            with workers(count, env, logs):
                warm, _ = burst(db, queue, phase_id, data, WARM_UP * count)
                wait_scored(db, warm, 120)
                ids, committed_at = burst(db, queue, phase_id, data, n)
                rows = wait_scored(db, ids, 600)
        finally:
            queue.close()
            db.dispose()
            purge(broker, prefix)
    return summarize(count, committed_at, rows)


def purge(broker: str, prefix: str) -> None:
    client = redis.Redis.from_url(broker)
    try:
        keys = list(client.scan_iter(match=f"*{prefix}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def render(runs: list[Run], gold_name: str, size: int) -> str:
    lines = [
        f"A burst of {runs[0].submissions} submissions of a {size / 1024:.0f} KB svident-detection run "
        f"({gold_name}); workers with concurrency 1; {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}.",
        "",
        "| scoring workers | submissions | seconds | submissions/s | upload to scored p50 | p99 | mean scoring |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        lines.append(
            f"| {r.workers} | {r.submissions} | {r.seconds:.2f} | {r.throughput:.1f} | {r.p50_s:.2f} s "
            f"| {r.p99_s:.2f} s | {1000 * r.mean_scoring_s:.0f} ms |"
        )
    by_workers = {r.workers: r for r in runs}
    if 1 in by_workers and 2 in by_workers:
        ratio = by_workers[2].throughput / by_workers[1].throughput
        lines += ["", f"Throughput, 2 workers / 1 worker: {ratio:.2f} (target: at least 1.8)."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="submissions in the burst")
    parser.add_argument("--workers", default="1,2", help="numbers of worker processes to try, comma-separated")
    parser.add_argument(
        "--postgres", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres", help="a PostgreSQL server"
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14", help="the Redis broker")
    parser.add_argument("--gold", type=Path, help="an SV-Ident TSV (default: the shared val.tsv)")
    parser.add_argument("--write", action="store_true", help=f"put the table into {RESULTS.name}")
    args = parser.parse_args()
    gold_path = args.gold or (SHARED_GOLD if SHARED_GOLD.is_file() else EXAMPLE_GOLD)
    gold = gold_path.read_bytes()
    with tempfile.TemporaryDirectory(prefix="podium-queue-bench-") as tmp:
        runs = [run(int(c), args.n, args.postgres, args.redis, gold, Path(tmp)) for c in args.workers.split(",")]
    table = render(runs, gold_path.name, len(submission_for(gold)))
    print(table)
    if args.write:
        RESULTS.write_text(replace_section(RESULTS.read_text(encoding="utf-8"), SECTION, table), encoding="utf-8")


if __name__ == "__main__":
    main()
