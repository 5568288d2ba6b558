"""Load benchmark: the requests per second Podium holds with p99 under 500 ms in a deadline hour,
embedded and distributed, with the errors and the accepted submissions that never got scored (lost).

For each mode a fresh database gets the example competitions (``podium demo``) and ``--teams`` teams
with API tokens, and the server runs as its own processes on this machine:

* embedded: ``podium serve`` on SQLite, scoring in its pool of ``--workers`` threads;
* distributed: PostgreSQL (a fresh database on ``--postgres``, dropped afterwards), Redis as the broker
  (``--redis``; queue names of this run's own, deleted afterwards), ``podium serve`` and two
  ``podium worker --queues scoring`` processes.

Then steps of increasing offered load (the mix of ``bench/load_mix.py``: 60 % page views, 30 %
leaderboard reads, 10 % uploads by many teams), each ``--step-seconds`` long, until a step misses
p99 < 500 ms or has errors. Afterwards every submission in the database must reach ``scored`` within
``--drain-seconds``; the others are lost. Traffic goes to 127.0.0.1 only.

    .venv/bin/python bench/load.py                          # both modes
    .venv/bin/python bench/load.py --mode embedded --write-results
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy import create_engine, func, select

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from app.services.accounts import users  # noqa: E402
from app.services.competitions import demo  # noqa: E402
from app.storage.db import Database, scratch_database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402
from app.storage.models import Submission  # noqa: E402
from bench.load_mix import UPLOAD_PHASES, Mix, run_step  # noqa: E402
from bench.load_report import (  # noqa: E402
    HEADING,
    OUT,
    TABLE_HEAD,
    ModeResult,
    Step,
    render,
    row,
    saved,
    write_results,
)

STEPS = (5, 10, 15, 20, 30, 40, 50, 60, 80, 100, 120, 150, 200, 250, 300)
PASSWORD = "load bench password"


# -- the servers ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def prepare(url: str, teams: int) -> list[str]:
    """Migrate, add the example competitions and ``teams`` users with a token each; return the tokens."""
    database = Database(url)
    try:
        upgrade(database.engine)
        with database.session() as session:
            demo.seed(session, ROOT / "examples", None)
            hashed = users.hash_password(PASSWORD)
            tokens = []
            for i in range(teams):
                user = users.create_user(session, f"team-{i:04d}", PASSWORD, password_hash=hashed)
                tokens.append(users.issue_token(session, user, "load"))
            session.commit()
        return tokens
    finally:
        database.dispose()


@contextmanager
def process(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m app.cli ARGS`` as its own process, stopped (SIGTERM, then SIGKILL) on exit."""
    with log.open("wb") as output:
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", *args], cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/v1/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.3)
    raise SystemExit(f"podium serve did not start; see {log}:\n{log.read_text()[-3000:]}")


def postgres_database(server_url: str) -> AbstractContextManager[str]:
    """A fresh database on the PostgreSQL server at ``server_url``, dropped afterwards."""
    return scratch_database(server_url, "podium_load")


@contextmanager
def redis_queues(url: str) -> Iterator[str]:
    """A queue-name prefix of this run's own on the Redis at ``url``; its keys are deleted afterwards."""
    import redis

    prefix = f"podium-load-{secrets.token_hex(4)}-"
    client = redis.Redis.from_url(url)
    client.ping()
    try:
        yield prefix
    finally:
        for key in client.scan_iter(match=f"*{prefix}*"):
            client.delete(key)
        client.close()


@contextmanager
def servers(mode: str, args: argparse.Namespace, folder: Path, teams: int) -> Iterator[tuple[str, str, list[str]]]:
    """The mode's processes on a fresh database; yields (base URL, database URL, team tokens)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PODIUM_")}
    env["PODIUM_SECRET_KEY"] = secrets.token_urlsafe(32)
    with ExitStack() as stack:
        if mode == "embedded":
            url = f"sqlite:///{folder / 'podium.sqlite3'}"
            env.update(PODIUM_DATABASE_URL=url, PODIUM_WORKERS=str(args.workers))
        else:
            url = stack.enter_context(postgres_database(args.postgres))
            prefix = stack.enter_context(redis_queues(args.redis))
            env.update(PODIUM_DATABASE_URL=url, PODIUM_BROKER_URL=args.redis, PODIUM_QUEUE_PREFIX=prefix)
        tokens = prepare(url, teams)
        port = free_port()
        log = folder / f"{mode}-serve.log"
        serve = stack.enter_context(process(["serve", "--port", str(port)], env, log))
        if mode == "distributed":
            for i in range(2):
                worker = ["worker", "--queues", "scoring", "--concurrency", "1", "--loglevel", "warning"]
                stack.enter_context(process(worker, env, folder / f"worker-{i}.log"))
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base, serve, log)
        yield base, url, tokens


# -- one mode -----------------------------------------------------------------------------------------


def statuses(url: str) -> dict[str, int]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(select(Submission.status, func.count()).group_by(Submission.status)).all()
        return {status: int(n) for status, n in rows}
    finally:
        engine.dispose()


def drain(url: str, seconds: float) -> tuple[dict[str, int], float]:
    """Wait until no submission is queued or running (or ``seconds`` pass); the counts by status."""
    start = time.monotonic()
    while True:
        counts = statuses(url)
        idle = not counts.get("queued") and not counts.get("running")
        if idle or time.monotonic() - start > seconds:
            return counts, time.monotonic() - start
        time.sleep(0.5)


def warm_up(base: str, token: str, url: str) -> None:
    """One upload to each phase, scored, before anything is timed (the workers are up, the gold is cached)."""
    mix = Mix.prepared([token])
    for ref, _ in UPLOAD_PHASES:
        c, t, p = ref
        answer = httpx.post(
            f"{base}/api/v1/competitions/{c}/tasks/{t}/phases/{p}/submissions",
            headers={"Authorization": f"Bearer {token}"},
            files={"file": ("run.json", mix.runs[ref][0])},
            timeout=30,
        )
        if answer.status_code != 202:
            raise SystemExit(f"the warm-up upload to {c}/{t}/{p} was refused: {answer.text}")
    counts, _ = drain(url, 120)
    if set(counts) != {"scored"}:
        raise SystemExit(f"the warm-up uploads were not scored: {counts}")


def run_mode(mode: str, args: argparse.Namespace) -> ModeResult:
    steps: list[Step] = []
    accepted = 0
    load_before = round(os.getloadavg()[0], 1)
    with (
        tempfile.TemporaryDirectory(prefix="podium-load-") as tmp,
        servers(mode, args, Path(tmp), args.teams) as (
            base,
            url,
            tokens,
        ),
    ):
        warm_up(base, tokens[0], url)
        mix = Mix.prepared(tokens)
        asyncio.run(run_step(base, mix, 5, 5, seed=0))  # caches and connections warm, not recorded
        for i, rate in enumerate(r for r in args.steps if r <= args.max_rps):
            result = asyncio.run(run_step(base, mix, rate, args.step_seconds, seed=i + 1))
            accepted += sum(o.ok and o.kind == "upload" for o in result.outcomes)
            step = Step.of(result)
            steps.append(step)
            print(row(mode, step), flush=True)
            if not step.held:
                break
        counts, waited = drain(url, args.drain_seconds)
    command = " ".join(["bench/load.py", *sys.argv[1:]])
    return ModeResult(
        mode,
        datetime.now(UTC).isoformat(timespec="seconds"),
        os.cpu_count() or 0,
        load_before,
        command,
        steps,
        accepted,
        counts,
        round(waited, 1),
    )


def distributed_available() -> str | None:
    """Why the distributed mode cannot run here, or None when it can."""
    probe = subprocess.run([sys.executable, "-m", "app.cli", "worker", "--help"], cwd=ROOT, capture_output=True)
    return None if probe.returncode == 0 else "`podium worker` does not exist in this version"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["embedded", "distributed", "both"], default="both")
    parser.add_argument("--teams", type=int, default=200, help="teams that upload (one token each)")
    parser.add_argument("--workers", type=int, default=2, help="scoring threads of the embedded server")
    parser.add_argument("--steps", type=lambda s: [float(x) for x in s.split(",")], default=list(STEPS))
    parser.add_argument("--max-rps", type=float, default=float("inf"), help="skip steps above this rate")
    parser.add_argument("--step-seconds", type=float, default=15.0)
    parser.add_argument("--drain-seconds", type=float, default=300.0)
    parser.add_argument("--postgres", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--write-results", action="store_true", help=f"update the section {HEADING!r} of RESULTS.md")
    args = parser.parse_args()

    modes = ["embedded", "distributed"] if args.mode == "both" else [args.mode]
    print(TABLE_HEAD, flush=True)
    for mode in modes:
        if mode == "distributed" and (why := distributed_available()):
            print(f"distributed mode skipped: {why}", flush=True)
            continue
        result = run_mode(mode, args)
        OUT.mkdir(exist_ok=True)
        (OUT / f"load-{mode}.json").write_text(json.dumps(asdict(result), indent=1))
    results = [r for r in (saved("embedded"), saved("distributed")) if r is not None]
    print()
    print(render(results))
    for r in results:
        print(f"{r.mode}: {r.held_rps:.1f} requests/s held at p99 < 500 ms; lost submissions: {r.lost}")
    if args.write_results:
        write_results(render(results))


if __name__ == "__main__":
    main()
