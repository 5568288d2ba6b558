"""Fairness benchmark: two competitions flooding one worker, the share each gets over time, and what the fair
order costs a claim.

In the embedded mode (the server in this process, SQLite, one scoring thread), ``ada`` floods competition
``alpha`` with A uploads; once the worker has started its fifth, ``cleo`` floods ``beta`` with B uploads.
Every job sleeps ``--seconds`` in the test scorer ``test-slow``. The first table follows the jobs the worker
started after beta's first upload, in windows of ten: how many were alpha's and beta's, as measured, and as
first come first served would have run the same jobs (the same arrivals and the same measured durations,
one worker, the order of upload: what the broker's own order gave before). The second says how many of
alpha's jobs started between beta's first upload and beta's first start.

The third times the query that picks the next job (``fair.fairest``) and the places shown
(``fair.positions``, for one row) with ``--depth`` submissions queued (nine in ten alpha's, in ten teams),
median of 20, on SQLite and, with ``--database-url`` (an empty PostgreSQL database), on PostgreSQL.

    .venv/bin/python bench/fair_bench.py [--alpha 40] [--beta 20] [--seconds 0.1] [--depth 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import insert, select  # noqa: E402

from app.config import Settings  # noqa: E402
from app.main import create_app  # noqa: E402
from app.services.jobs import fair  # noqa: E402
from app.services.jobs.claiming import eligible  # noqa: E402
from app.storage.db import Database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402
from app.storage.models import Phase, Submission, Task, Team  # noqa: E402
from app.storage.types import utcnow  # noqa: E402
from scorers import register, scorer_names  # noqa: E402
from tests.app.fairness import competitions, send  # noqa: E402
from tests.app.slow_scorer import NAME as SLOW  # noqa: E402
from tests.app.slow_scorer import SlowScorer  # noqa: E402

WINDOW = 10


def flood(work: Path, alpha: int, beta: int, seconds: float) -> tuple[Database, datetime]:
    """Run the two floods through one worker; the database and the instant of beta's first upload."""
    database = Database(f"sqlite:///{work / 'podium.sqlite3'}")
    upgrade(database.engine)
    heads = competitions(database, scorer=SLOW, scorer_options={"seconds": seconds})
    settings = Settings(database_url=database.url, data_dir=work / "data", workers=1, secret_key="fair-bench")
    with TestClient(create_app(settings)) as client:
        for _ in range(alpha):
            send(client, heads, "ada", "alpha")
        while started_count(database) < 5:
            time.sleep(0.01)
        beta_came = utcnow()
        for _ in range(beta):
            send(client, heads, "cleo", "beta")
        assert client.app.state.podium.queue.wait_idle(600)  # type: ignore[attr-defined]
    return database, beta_came


def started_count(database: Database) -> int:
    with database.session(read_only=True) as session:
        return len(list(session.scalars(select(Submission.id).where(Submission.started_at.is_not(None)))))


def jobs(database: Database) -> list[tuple[str, datetime, datetime, float]]:
    """Each job: its competition, when it came, when it started, and how long it ran (seconds)."""
    with database.session(read_only=True) as session:
        rows = session.execute(
            select(Task.competition_id, Submission.created_at, Submission.started_at, Submission.finished_at)
            .join(Phase, Phase.id == Submission.phase_id)
            .join(Task, Task.id == Phase.task_id)
        ).all()
        first = min(competition for competition, *_ in rows)
    return [
        ("alpha" if competition == first else "beta", came, started, (finished - started).total_seconds())
        for competition, came, started, finished in rows
    ]


def first_come_first_served(measured: list[tuple[str, datetime, datetime, float]]) -> list[tuple[str, datetime]]:
    """The same jobs on one worker in the order they came: (competition, start)."""
    clock: datetime | None = None
    order = []
    for competition, came, _, seconds in sorted(measured, key=lambda job: job[1]):
        start = came if clock is None or clock < came else clock
        order.append((competition, start))
        clock = start + timedelta(seconds=seconds)
    return order


def windows(starts: list[tuple[str, datetime]], since: datetime) -> list[tuple[int, int]]:
    """(alpha, beta) jobs in each window of ``WINDOW`` starts after ``since``."""
    after = [competition for competition, start in sorted(starts, key=lambda s: s[1]) if start >= since]
    chunks = [after[i : i + WINDOW] for i in range(0, len(after), WINDOW)]
    return [(chunk.count("alpha"), chunk.count("beta")) for chunk in chunks]


def alpha_before_beta(starts: list[tuple[str, datetime]], since: datetime) -> int:
    ordered = [competition for competition, start in sorted(starts, key=lambda s: s[1]) if start >= since]
    return ordered.index("beta") if "beta" in ordered else len(ordered)


def shares_table(alpha: int, beta: int, seconds: float) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        database, came = flood(Path(tmp), alpha, beta, seconds)
        measured = jobs(database)
        database.dispose()
    fair_starts = [(competition, started) for competition, _, started, _ in measured]
    fifo_starts = first_come_first_served(measured)
    fair_windows, fifo_windows = windows(fair_starts, came), windows(fifo_starts, came)
    lines = [
        f"alpha {alpha} jobs, beta {beta} jobs (from alpha's fifth start), {seconds:g} s each, one worker",
        "",
        "| jobs started after beta's first upload | fair: alpha | fair: beta | first come: alpha | first come: beta |",
        "|---|---:|---:|---:|---:|",
    ]
    for n, (mine, theirs) in enumerate(zip(fair_windows, fifo_windows, strict=False)):
        lines.append(f"| {n * WINDOW + 1}-{n * WINDOW + WINDOW} | {mine[0]} | {mine[1]} | {theirs[0]} | {theirs[1]} |")
    lines += [
        "",
        "| alpha's jobs started between beta's first upload and its first start | fair | first come |",
        "|---|---:|---:|",
        f"| | {alpha_before_beta(fair_starts, came)} | {alpha_before_beta(fifo_starts, came)} |",
    ]
    return lines


def deep_queue(database: Database, depth: int) -> None:
    """``depth`` queued submissions, nine in ten alpha's over ten teams, copied from one real upload."""
    upgrade(database.engine)
    with tempfile.TemporaryDirectory() as tmp:
        heads = competitions(database, scorer=SLOW)
        settings = Settings(database_url=database.url, data_dir=Path(tmp), workers=0, secret_key="fair-bench")
        with TestClient(create_app(settings)) as client:
            template_id = send(client, heads, "ada", "alpha")
            send(client, heads, "cleo", "beta")
    with database.session() as session:
        template = session.get(Submission, template_id)
        assert template is not None
        phases = dict(
            session.execute(select(Task.competition_id, Phase.id).join(Phase, Phase.task_id == Task.id)).all()
        )
        alpha_id, beta_id = sorted(phases)
        teams: dict[int, list[int]] = {competition: [] for competition in phases}
        for competition in phases:
            for k in range(10):
                team = Team(
                    competition_id=competition, name=f"team {k}", name_key=f"team{k}", invite_code=f"{competition}-{k}"
                )
                session.add(team)
                session.flush()
                teams[competition].append(team.id)
        columns = {c.key: getattr(template, c.key) for c in Submission.__table__.columns if c.key != "id"}
        now = utcnow()
        rows = []
        for k in range(depth):
            competition = beta_id if k % 10 == 9 else alpha_id
            at = now - timedelta(seconds=depth - k)
            rows.append(
                columns
                | {
                    "phase_id": phases[competition],
                    "team_id": teams[competition][k % 7 if competition == alpha_id else 0],
                    "created_at": at,
                    "enqueued_at": at,
                    "sent_at": at,
                    "status": "queued",
                }
            )
        session.execute(insert(Submission), rows)
        session.commit()


def timed(step: object, repeat: int = 20) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        step()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def cost_rows(database: Database, name: str, depth: int) -> list[str]:
    deep_queue(database, depth)
    now = utcnow()
    with database.session(read_only=True) as session:
        last = session.scalar(select(Submission.id).order_by(Submission.id.desc()).limit(1))
        assert last is not None
        pick = timed(lambda: fair.fairest(session, Submission, now, eligible(Submission, last, now)))
        place = timed(lambda: fair.positions(session, Submission, [last], now))
    return [f"| {name} | {depth} | {pick:.1f} ms | {place:.1f} ms |"]


def cost_table(depth: int, database_url: str | None) -> list[str]:
    lines = [
        "| database | queued | pick the next job (`fair.fairest`) | a place shown (`fair.positions`) |",
        "|---|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        database = Database(f"sqlite:///{Path(tmp) / 'deep.sqlite3'}")
        lines += cost_rows(database, "SQLite", depth)
        database.dispose()
    if database_url:
        database = Database(database_url)
        lines += cost_rows(database, "PostgreSQL", depth)
        database.dispose()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alpha", type=int, default=40, help="alpha's uploads")
    parser.add_argument("--beta", type=int, default=20, help="beta's uploads")
    parser.add_argument("--seconds", type=float, default=0.1, help="each job's sleep")
    parser.add_argument("--depth", type=int, default=2000, help="queued submissions for the cost table")
    parser.add_argument("--database-url", help="an empty PostgreSQL database for the cost table too")
    args = parser.parse_args()
    if SLOW not in scorer_names():
        register(SlowScorer)
    print(
        f"date -u: {time.strftime('%a %b %d %H:%M:%S UTC %Y', time.gmtime())}, nproc {os.cpu_count()}, "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n"
    )
    print("\n".join(shares_table(args.alpha, args.beta, args.seconds)))
    print()
    print("\n".join(cost_table(args.depth, args.database_url)))


if __name__ == "__main__":
    main()
