"""Capacity of the distributed mode's processes, for sizing a large site (docs/DEPLOYMENT.md).

On a fresh PostgreSQL database (created on ``--postgres``'s server, dropped afterwards), with Redis as the broker
(``--redis``; queue names of this run's own, deleted afterwards) and files in a disk store in a temporary folder,
one competition holds a phase per seed scorer with the score benchmark's test-size gold (``bench/score_inputs.py``).
Two measurements, each printed as a table:

* **Uploads**: one ``podium serve`` process (the distributed mode's web tier: it validates, stores and queues,
  scoring nothing) and, per scorer, steps of 1, 2, 4 and 8 clients each sending the scorer's test-size submission
  again as soon as the last one was answered, for ``--step-seconds``. Per step: uploads accepted per minute and
  the p50/p99 answer time; "at p99 < 1 s" is the most uploads per minute of a step whose p99 stayed under 1 s
  with no error.
* **Scoring**: the uploads of the first part set aside (failed, their messages deleted), ``--jobs`` submissions
  per scorer are queued, then one ``podium worker --queues scoring --concurrency 1`` (one scoring slot, one core)
  is started and scores them all. The worker is never idle meanwhile, so the time from one job's end to the next
  one's end is what a job costs a slot, claim and message included: per scorer, its median gives scored
  submissions per minute per slot; a worker scores about that times its ``--concurrency`` while it has a core per
  slot.

    .venv/bin/python bench/capacity_bench.py [--scorers a,b] [--clients 1,2,4,8] [--step-seconds 4] [--jobs 5]
        [--board-submissions 1000]

With ``--board-submissions N`` it also times what a board read costs a web process of the distributed mode, where
each read asks the database whether a worker changed the board: the phase's fingerprint, on a phase of N scored
submissions.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import redis
from sqlalchemy import select, update

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from app.services.accounts import users  # noqa: E402
from app.services.boards.staleness import fingerprint  # noqa: E402
from app.services.competitions import catalog  # noqa: E402
from app.storage.db import Database, scratch_database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402
from app.storage.models import Phase, Submission  # noqa: E402
from bench.intake_bench import free_port, percentile  # noqa: E402
from bench.leaderboard_bench import seed  # noqa: E402
from bench.server_cost_bench import Inputs, competition, inputs_for  # noqa: E402

SEED = ("svident-detection", "svident-disambiguation", "scier-ere", "scier-re", "famus-cdae", "famus-sv")
PODIUM = str(Path(sys.executable).with_name("podium"))
GOAL_SECONDS = 1.0


@dataclass
class Step:
    scorer: str
    clients: int
    accepted: int
    errors: int
    seconds: float
    latencies: list[float]

    @property
    def per_minute(self) -> float:
        return 60 * self.accepted / self.seconds

    @property
    def meets(self) -> bool:
        return self.errors == 0 and bool(self.latencies) and percentile(self.latencies, 0.99) < GOAL_SECONDS


def prepare(url: str, all_inputs: Sequence[Inputs], n: int) -> list[str]:
    database = Database(url)
    upgrade(database.engine)
    hashed = users.hash_password("bench password")
    with database.session() as session:
        catalog.create_competition(session, competition(all_inputs))
        tokens = [
            users.issue_token(session, users.create_user(session, f"bench-{i}", "bench password", password_hash=hashed))
            for i in range(n)
        ]
        session.commit()
    database.dispose()
    return tokens


def environment(url: str, broker: str, prefix: str, blobs: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PODIUM_")}
    env.update(
        PODIUM_DATABASE_URL=url,
        PODIUM_BROKER_URL=broker,
        PODIUM_QUEUE_PREFIX=prefix,
        PODIUM_BLOB_STORE="disk",
        PODIUM_BLOB_DIR=str(blobs),
        PODIUM_SECRET_KEY=secrets.token_hex(32),
        PODIUM_MAX_UPLOAD_BYTES=str(256 * 1024 * 1024),
    )
    return env


@contextmanager
def process(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        child = subprocess.Popen([PODIUM, *args], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield child
        finally:
            child.terminate()
            try:
                child.wait(60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(30)


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.1)


def answers(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def address(scorer: str) -> str:
    return f"/api/v1/competitions/bench/tasks/{scorer}/phases/test/submissions"


def upload_step(base: str, inputs: Inputs, tokens: Sequence[str], seconds: float) -> Step:
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(token: str) -> None:
        with httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {token}"}) as http:
            while time.monotonic() < stop:
                started = time.perf_counter()
                answer = http.post(address(inputs.scorer), files={"file": (inputs.submission_name, inputs.submission)})
                spent = time.perf_counter() - started
                with lock:
                    if answer.status_code == 202:
                        latencies.append(spent)
                    else:
                        errors[0] += 1

    began = time.monotonic()
    threads = [threading.Thread(target=client, args=(token,)) for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Step(inputs.scorer, len(tokens), len(latencies), errors[0], time.monotonic() - began, latencies)


def set_aside(url: str, broker: str, prefix: str) -> None:
    """The uploads of the first part leave the queue: failed rows, their messages deleted."""
    database = Database(url)
    with database.session() as session:
        session.execute(update(Submission).where(Submission.status == "queued").values(status="failed"))
        session.commit()
    database.dispose()
    client = redis.Redis.from_url(broker)
    try:
        keys = list(client.scan_iter(match=f"*{prefix}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def queue_jobs(base: str, all_inputs: Sequence[Inputs], token: str, jobs: int) -> dict[int, str]:
    """Queue ``jobs`` submissions per scorer; returns the scorer of each."""
    scorer_of: dict[int, str] = {}
    with httpx.Client(base_url=base, timeout=120, headers={"Authorization": f"Bearer {token}"}) as http:
        for inputs in all_inputs:
            for _ in range(jobs):
                answer = http.post(address(inputs.scorer), files={"file": (inputs.submission_name, inputs.submission)})
                answer.raise_for_status()
                scorer_of[int(answer.json()["id"])] = inputs.scorer
    return scorer_of


def gaps(url: str, scorer_of: dict[int, str], timeout: float) -> dict[str, list[float]]:
    """Once every one is scored: per scorer, the seconds from the end of the job before (or the first start) to
    the end of each of its jobs."""
    database = Database(url)
    try:

        def rows() -> list[tuple[int, str, float, float]]:
            with database.session(read_only=True) as session:
                found = session.execute(
                    select(Submission.id, Submission.status, Submission.started_at, Submission.finished_at).where(
                        Submission.id.in_(list(scorer_of))
                    )
                ).all()
            return [
                (
                    row.id,
                    str(row.status),
                    row.started_at.timestamp() if row.started_at else 0.0,
                    row.finished_at.timestamp() if row.finished_at else 0.0,
                )
                for row in found
            ]

        wait_until(lambda: all(status in ("scored", "failed") for _, status, _, _ in rows()), timeout, "scoring")
        done = sorted(rows(), key=lambda row: row[3])
        failed = [row for row in done if row[1] != "scored"]
        if failed:
            raise RuntimeError(f"{len(failed)} submissions failed")
        out: dict[str, list[float]] = {}
        previous = done[0][2]
        for submission, _, _, finished in done:
            out.setdefault(scorer_of[submission], []).append(finished - previous)
            previous = finished
        return out
    finally:
        database.dispose()


def render(steps: Sequence[Step], spent: dict[str, list[float]], sizes: dict[str, int]) -> str:
    lines = [
        "| scorer | submission KB | clients | uploads/min | p50 s | p99 s | errors |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for step in steps:
        p50, p99 = percentile(step.latencies, 0.5), percentile(step.latencies, 0.99)
        lines.append(
            f"| {step.scorer} | {sizes[step.scorer] // 1024} | {step.clients} | {step.per_minute:.0f} | {p50:.2f} | "
            f"{p99:.2f} | {step.errors} |"
        )
    lines += [
        "",
        "| scorer | uploads/min of one web process at p99 < 1 s | scored/min per scoring slot | median s per job |",
    ]
    lines.append("|---|---:|---:|---:|")
    for scorer in sizes:
        meeting = [step.per_minute for step in steps if step.scorer == scorer and step.meets]
        best = f"{max(meeting):.0f}" if meeting else "none (p99 >= 1 s at 1 client)"
        median = statistics.median(spent[scorer]) if scorer in spent else float("nan")
        lines.append(f"| {scorer} | {best} | {60 / median:.0f} | {median:.2f} |")
    return "\n".join(lines)


def board_check(server: str, submissions: int, reads: int = 200) -> str:
    """What a board read costs a web process of the distributed mode, where each read asks the database whether a
    worker changed the board: the phase's fingerprint on a fresh phase of ``submissions`` scored submissions (one
    per team), each read in a read-only session of its own."""
    with scratch_database(server, "podium_capacity") as url:
        scored = seed(url, submissions, 1)
        database = Database(url)
        try:
            with database.session(read_only=True) as session:
                phase_id = session.scalar(select(Phase.id))
            assert phase_id is not None
            spent = []
            for _ in range(reads):
                with database.session(read_only=True) as session:
                    started = time.perf_counter()
                    fingerprint(session, phase_id)
                    spent.append(1000 * (time.perf_counter() - started))
        finally:
            database.dispose()
    return (
        f"board check on {scored} scored submissions: median {statistics.median(spent):.2f} ms, "
        f"p99 {percentile(spent, 0.99):.2f} ms over {reads} reads"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--scorers", default=",".join(SEED))
    parser.add_argument("--clients", default="1,2,4,8")
    parser.add_argument("--step-seconds", type=float, default=4.0)
    parser.add_argument("--jobs", type=int, default=5)
    parser.add_argument(
        "--board-submissions",
        type=int,
        default=0,
        help="also time a board's check against the database on a phase of this many scored submissions "
        "(1000: about 1.5 minutes more)",
    )
    args = parser.parse_args(argv)
    scorers = [name for name in args.scorers.split(",") if name]
    clients = [int(n) for n in args.clients.split(",")]
    prefix = f"podium-capacity-{secrets.token_hex(4)}-"
    print(
        f"start {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, nproc {os.cpu_count()}, "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp, scratch_database(args.postgres, "podium_capacity") as url:
        folder = Path(tmp)
        all_inputs = [inputs_for(scorer, folder / "inputs") for scorer in scorers]
        tokens = prepare(url, all_inputs, max(clients))
        env = environment(url, args.redis, prefix, folder / "blobs")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        steps: list[Step] = []
        try:
            with process(["serve", "--port", str(port), "--no-migrate"], env, folder / "serve.log") as web:
                wait_until(lambda: answers(base) or web.poll() is not None, 90, "podium serve")
                for inputs in all_inputs:
                    for n in clients:
                        steps.append(upload_step(base, inputs, tokens[:n], args.step_seconds))
                        print(f"  uploads {inputs.scorer} x{n}: {steps[-1].per_minute:.0f}/min", flush=True)
                set_aside(url, args.redis, prefix)
                scorer_of = queue_jobs(base, all_inputs, tokens[0], args.jobs)
                with process(["worker", "--queues", "scoring", "--concurrency", "1"], env, folder / "worker.log"):
                    spent = gaps(url, scorer_of, timeout=600)
        finally:
            set_aside(url, args.redis, prefix)
    sizes = {inputs.scorer: len(inputs.submission) for inputs in all_inputs}
    print(f"end {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, load average {os.getloadavg()[0]:.1f}")
    print()
    print(render(steps, spent, sizes))
    if args.board_submissions:
        print()
        print(board_check(args.postgres, args.board_submissions))


if __name__ == "__main__":
    main()
