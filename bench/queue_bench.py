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

With ``--probe`` each worker loads ``bench/queue_probe.py``, and a second table shows per task the
SQL statements, pool checkouts, commits and time in the database, the task's own time, and the gap
between one task's end and the next one's start in the same process: where a second worker waits.

    .venv/bin/python bench/queue_bench.py [-n 200] [--workers 1,2] [--probe] [--write]
"""

from __future__ import annotations

import argparse
import itertools
import json
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
from typing import Any

import redis
from sqlalchemy import func, select, text

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
def workers(count: int, env: dict[str, str], logs: Path) -> Iterator[list[int]]:
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
        yield [process.pid for process, _, _ in started]
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


def run(
    count: int,
    n: int,
    postgres: str,
    broker: str,
    gold: bytes,
    logs: Path,
    probe: Path | None = None,
    nice: int | None = None,
) -> Run:
    """One burst of ``n`` over ``count`` workers; with ``probe``, the workers load bench/queue_probe.py
    and write their per-task figures under that folder."""
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
        if probe is not None:
            probe.mkdir(parents=True, exist_ok=True)
            env.update(PODIUM_PLUGINS="bench.queue_probe", PODIUM_PROBE_DIR=str(probe))
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
        data = submission_for(gold)
        try:
            with workers(count, env, logs) as pids:
                warm, _ = burst(db, queue, phase_id, data, WARM_UP * count)
                wait_scored(db, warm, 120)
                groups = cpu_groups(db, broker, pids)
                if nice is not None:  # the benchmark's own processes before other work on the machine
                    for name, members in groups.items():
                        for pid in members if name != "Redis" else ():
                            os.setpriority(os.PRIO_PROCESS, pid, nice)
                before = cpu_seconds(groups)
                ids, committed_at = burst(db, queue, phase_id, data, n)
                rows = wait_scored(db, ids, 600)
                used = {name: cpu_seconds(groups)[name] - seconds for name, seconds in before.items()}
        finally:
            queue.close()
            db.dispose()
            purge(broker, prefix)
    result = summarize(count, committed_at, rows)
    if probe is not None:
        (probe / "burst.json").write_text(json.dumps({"committed_at": committed_at.timestamp(), "ids": ids}))
        (probe / "cpu.json").write_text(json.dumps(used))
    return result


#: Processes whose CPU time the benchmark adds up, by group (see ``cpu_groups``).
CPU_GROUPS = ("worker parents", "worker children", "PostgreSQL backends", "Redis", "this benchmark", "machine")


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def cpu_groups(db: Database, broker: str, worker_pids: list[int]) -> dict[str, list[int]]:
    """The processes of each group: the workers and their pool children, the database's backends
    serving the benchmark's database, the Redis server, this process."""
    with db.session(read_only=True) as session:
        backends = list(session.scalars(text("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")))
    client = redis.Redis.from_url(broker)
    try:
        redis_pid = int(client.info("server")["process_id"])
    finally:
        client.close()
    return {
        "worker parents": worker_pids,
        "worker children": [child for pid in worker_pids for child in _children(pid)],
        "PostgreSQL backends": backends,
        "Redis": [redis_pid],
        "this benchmark": [os.getpid()],
    }


def cpu_seconds(groups: dict[str, list[int]]) -> dict[str, float]:
    """CPU seconds (user + system) used so far by each group, and by the whole machine."""
    tick = os.sysconf("SC_CLK_TCK")
    totals = {}
    for name, pids in groups.items():
        total = 0
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # gone: a backend closed meanwhile
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime
        totals[name] = total / tick
    busy = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    idle = int(busy[3]) + int(busy[4])  # idle, iowait
    totals["machine"] = (sum(int(v) for v in busy[:8]) - idle) / tick
    return totals


@dataclass(frozen=True)
class Probe:
    """Per-task figures of one run's burst, from the workers' probe files (means per task)."""

    workers: int
    tasks: int
    statements: float
    checkouts: float
    commits: float
    db_ms: float
    task_ms: float
    gap_ms: float
    busy: float  # share of the burst's seconds the worker processes spent inside tasks
    kinds: str  # statements per task by their first word
    cpu_ms: dict[str, float]  # CPU milliseconds per task by process group (and the whole machine)

    @staticmethod
    def read(workers: int, folder: Path, seconds: float) -> Probe:
        committed_at = json.loads((folder / "burst.json").read_text())["committed_at"]
        by_pid: dict[int, list[dict[str, Any]]] = {}
        for path in folder.glob("*.jsonl"):
            for line in path.read_text().splitlines():
                task = json.loads(line)
                if task["start"] >= committed_at:  # the burst's tasks, not the warm-up's
                    by_pid.setdefault(task["pid"], []).append(task)
        tasks = [task for found in by_pid.values() for task in found]
        gaps = []
        for found in by_pid.values():
            found.sort(key=lambda task: task["start"])
            gaps += [b["start"] - a["end"] for a, b in itertools.pairwise(found)]
        n = len(tasks) or 1
        kinds: dict[str, int] = {}
        for task in tasks:
            for kind, count in task["by_kind"].items():
                kinds[kind] = kinds.get(kind, 0) + count
        used = json.loads((folder / "cpu.json").read_text())
        return Probe(
            cpu_ms={name: 1000 * used[name] / n for name in CPU_GROUPS},
            workers=workers,
            tasks=len(tasks),
            statements=sum(t["statements"] for t in tasks) / n,
            checkouts=sum(t["checkouts"] for t in tasks) / n,
            commits=sum(t["commits"] for t in tasks) / n,
            db_ms=1000 * sum(t["db_s"] for t in tasks) / n,
            task_ms=1000 * sum(t["end"] - t["start"] for t in tasks) / n,
            gap_ms=1000 * sum(gaps) / (len(gaps) or 1),
            busy=sum(t["end"] - t["start"] for t in tasks) / (workers * seconds) if seconds > 0 else float("nan"),
            kinds=", ".join(f"{kind} {count / n:.1f}" for kind, count in sorted(kinds.items(), key=lambda kv: -kv[1])),
        )


def render_probes(probes: list[Probe]) -> str:
    lines = [
        "Per task, means over the burst (bench/queue_probe.py in each worker): SQL statements, pool "
        "checkouts (each one a ping first), commits, seconds inside the database calls, the task from "
        "Celery's prerun to postrun, the gap from one task's end to the next one's start in the same "
        "process, and the share of the burst the workers spent inside tasks.",
        "",
        "| scoring workers | tasks | statements | checkouts | commits | in SQL | task | gap between tasks | busy "
        "| statements by kind |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for p in probes:
        lines.append(
            f"| {p.workers} | {p.tasks} | {p.statements:.1f} | {p.checkouts:.1f} | {p.commits:.1f} | {p.db_ms:.1f} ms "
            f"| {p.task_ms:.1f} ms | {p.gap_ms:.1f} ms | {100 * p.busy:.0f} % | {p.kinds} |"
        )
    lines += [
        "",
        f"CPU milliseconds per task during the burst, by process ({os.cpu_count()} cores; 'machine' is every "
        "process of the machine, other work included):",
        "",
        "| scoring workers | " + " | ".join(CPU_GROUPS) + " |",
        "|---:|" + "---:|" * len(CPU_GROUPS),
    ]
    for p in probes:
        lines.append(f"| {p.workers} | " + " | ".join(f"{p.cpu_ms[name]:.1f}" for name in CPU_GROUPS) + " |")
    return "\n".join(lines)


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
    parser.add_argument("--probe", action="store_true", help="also print where each worker's time went")
    parser.add_argument(
        "--nice",
        type=int,
        help="scheduling priority of the workers, their pool processes, their database backends and the "
        "benchmark during the burst (root may give a negative one: a machine busy with other work)",
    )
    args = parser.parse_args()
    gold_path = args.gold or (SHARED_GOLD if SHARED_GOLD.is_file() else EXAMPLE_GOLD)
    gold = gold_path.read_bytes()
    counts = [int(c) for c in args.workers.split(",")]
    with tempfile.TemporaryDirectory(prefix="podium-queue-bench-") as tmp:
        folders = {c: Path(tmp) / f"probe-{c}" if args.probe else None for c in counts}
        runs = [run(c, args.n, args.postgres, args.redis, gold, Path(tmp), folders[c], args.nice) for c in counts]
        probes = [Probe.read(r.workers, folder, r.seconds) for r in runs if (folder := folders[r.workers])]
    table = render(runs, gold_path.name, len(submission_for(gold)))
    if probes:
        table += "\n\n" + render_probes(probes)
    print(table)
    if args.write:
        RESULTS.write_text(replace_section(RESULTS.read_text(encoding="utf-8"), SECTION, table), encoding="utf-8")


if __name__ == "__main__":
    main()
