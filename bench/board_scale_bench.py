"""Boards of a popular competition: what a board costs at 1,000 and 10,000 entries, on SQLite and PostgreSQL.

Seeds a ``svident-detection`` phase (``selection: best``): ``--distinct`` teams' runs are uploaded and scored
through the services (``bench/leaderboard_bench.py``'s ``seed``), then copied in bulk to ``--teams`` teams with
``--per-team`` scored submissions each (their score rows, units and intervals, under new teams and times), so that
10,000 entries take a minute to seed, not hours. Then, in this process, with the board cache the server uses
(``app.services.boards.cache.BoardCache``):

* cold build: the first board of a process (every entry's units read, every neighbour pair tested);
* rebuild after one new score: a scored submission lands (committed here, as the embedded pool commits), and the
  next read builds the board again (median of ``--landings``);
* readers while scores land: ``--readers`` threads read the board for ``--seconds`` while a score lands every
  ``--every`` seconds; the latency of each read (p50, p99, max) and reads per second;
* peak RSS of the process (``ru_maxrss``) after each step.

    .venv/bin/python bench/board_scale_bench.py --teams 1000 --per-team 3 [--database postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, text

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from app.services.boards.cache import BoardCache  # noqa: E402
from app.storage.db import Database  # noqa: E402
from app.storage.models import Phase, Score, Submission, SubmissionStatus, Team  # noqa: E402
from bench.leaderboard_bench import REF, seed  # noqa: E402


def rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def grow(database: Database, teams: int, per_team: int) -> tuple[list[dict[str, Any]], int]:
    """Copy the scored runs to ``teams`` teams of ``per_team`` submissions; returns the score templates and phase id."""
    with database.session() as session:
        phase_id = session.scalar(select(Phase.id).where(Phase.slug == REF[2]))
        template = session.scalars(select(Submission).where(Submission.phase_id == phase_id)).first()
        assert template is not None and phase_id is not None
        competition_id = session.scalar(select(Team.competition_id).where(Team.id == template.team_id))
        scores = [
            {
                column: getattr(score, column)
                for column in (
                    "scorer",
                    "scorer_version",
                    "metrics",
                    "breakdown",
                    "units",
                    "interval",
                    "private_metrics",
                    "private_units",
                )
            }
            for score in session.scalars(select(Score).join(Submission).where(Submission.phase_id == phase_id))
        ]
        have = session.scalar(select(text("count(*)")).select_from(Team)) or 0
        base = {
            "phase_id": phase_id,
            "blob_id": template.blob_id,
            "sha256": template.sha256,
            "size": template.size,
            "original_name": template.original_name,
            "status": SubmissionStatus.SCORED,
        }
    rng = random.Random(7)
    start = datetime(2024, 5, 1, tzinfo=UTC)
    batch = 500
    for first in range(have, teams, batch):
        numbers = range(first, min(teams, first + batch))
        with database.session() as session:
            team_ids = session.scalars(
                insert(Team).returning(Team.id),
                [
                    {
                        "competition_id": competition_id,
                        "name": f"Grown {n}",
                        "name_key": f"grown {n}",
                        "invite_code": f"g{n}",
                    }
                    for n in numbers
                ],
            ).all()
            rows = []
            for team_id in team_ids:
                for k in range(per_team):
                    moment = start + timedelta(days=20 * k / per_team, minutes=rng.randrange(0, 1440))
                    rows.append(
                        {
                            **base,
                            "team_id": team_id,
                            "method_name": f"system {k + 1}",
                            "created_at": moment,
                            "finished_at": moment,
                        }
                    )
            submission_ids = session.scalars(insert(Submission).returning(Submission.id), rows).all()
            session.execute(
                insert(Score),
                [{**rng.choice(scores), "submission_id": sid, "round": 1} for sid in submission_ids],
            )
            session.commit()
    if database.engine.dialect.name == "postgresql":  # what autovacuum does on a running site
        with database.engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE"))
    return scores, int(phase_id)


def land(database: Database, phase_id: int, scores: list[dict[str, Any]], rng: random.Random) -> None:
    """One more scored submission of a random team, committed as the embedded pool commits a score."""
    with database.session() as session:
        team_id = session.scalar(
            select(Submission.team_id).where(Submission.phase_id == phase_id).limit(1).offset(rng.randrange(100))
        )
        template = session.scalars(select(Submission).where(Submission.phase_id == phase_id).limit(1)).one()
        now = datetime.now(UTC)
        submission = Submission(
            phase_id=phase_id,
            team_id=team_id,
            blob_id=template.blob_id,
            sha256=template.sha256,
            size=template.size,
            original_name=template.original_name,
            method_name="late",
            status=SubmissionStatus.SCORED,
            created_at=now,
            finished_at=now,
        )
        session.add(submission)
        session.flush()
        session.add(Score(**rng.choice(scores), submission_id=submission.id, round=1))
        session.commit()


@dataclass
class Run:
    database: str
    teams: int
    per_team: int
    entries: int
    cold_s: float
    rebuild_s: float
    rebuild_cpu: float
    load: float
    reads: int
    read_rate: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    slow: int
    landed: int
    seed_s: float
    rss_cold: float
    rss_peak: float
    rss_end: float


def readers_while_landing(
    cache: BoardCache, database: Database, phase_id: int, scores: list[dict[str, Any]], args: argparse.Namespace
) -> tuple[list[float], int]:
    stop = threading.Event()
    latencies: list[list[float]] = [[] for _ in range(args.readers)]

    def read(into: list[float]) -> None:
        while not stop.is_set():
            started = time.perf_counter()
            cache.get(REF, "public")
            into.append(time.perf_counter() - started)
            time.sleep(0.001)  # a request's other work: rendering, the network

    threads = [threading.Thread(target=read, args=(into,)) for into in latencies]
    for thread in threads:
        thread.start()
    rng = random.Random(11)
    landed = 0
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        land(database, phase_id, scores, rng)
        landed += 1
        time.sleep(args.every)
    stop.set()
    for thread in threads:
        thread.join()
    return [x for into in latencies for x in into], landed


def measure(url: str, label: str, args: argparse.Namespace) -> Run:
    started = time.perf_counter()
    seed(url, args.distinct, 1)
    database = Database(url)
    scores, phase_id = grow(database, args.teams, args.per_team)
    seeded = time.perf_counter() - started
    cache = BoardCache(database, check_every=args.check_every)
    started = time.perf_counter()
    board = cache.get(REF, "public")
    cold = time.perf_counter() - started
    entries = len(board.entries)
    rss_cold = rss_mb()
    rng = random.Random(3)
    rebuilds, cpu = [], []
    for _ in range(args.landings):
        land(database, phase_id, scores, rng)
        started, started_cpu = time.perf_counter(), time.process_time()
        cache.get(REF, "public")
        rebuilds.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    latencies, landed = readers_while_landing(cache, database, phase_id, scores, args)
    latencies.sort()
    database.dispose()
    return Run(
        database=label,
        teams=args.teams,
        per_team=args.per_team,
        entries=entries,
        cold_s=cold,
        rebuild_s=statistics.median(rebuilds),
        rebuild_cpu=statistics.median(cpu),
        load=os.getloadavg()[0],
        reads=len(latencies),
        read_rate=len(latencies) / args.seconds,
        p50_ms=1000 * latencies[len(latencies) // 2],
        p99_ms=1000 * latencies[int(len(latencies) * 0.99)],
        max_ms=1000 * latencies[-1],
        slow=sum(1 for x in latencies if x > 0.1),
        landed=landed,
        seed_s=seeded,
        rss_cold=rss_cold,
        rss_peak=rss_mb(),
        rss_end=current_rss_mb(),
    )


def table(runs: list[Run]) -> str:
    head = (
        "database",
        "teams x runs",
        "entries",
        "cold build",
        "rebuild after one score (CPU)",
        "reads/s",
        "read p50",
        "read p99",
        "read max",
        "reads over 100 ms",
        "scores landed",
        "peak RSS after cold build",
        "peak RSS",
        "RSS at the end",
        "load average",
    )
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for r in runs:
        cells = (
            r.database,
            f"{r.teams:,} x {r.per_team}",
            f"{r.entries:,}",
            f"{r.cold_s:.2f} s",
            f"{r.rebuild_s:.3f} s ({r.rebuild_cpu:.3f})",
            f"{r.read_rate:,.0f}",
            f"{r.p50_ms:.2f} ms",
            f"{r.p99_ms:.2f} ms",
            f"{r.max_ms:.1f} ms",
            str(r.slow),
            str(r.landed),
            f"{r.rss_cold:.0f} MB",
            f"{r.rss_peak:.0f} MB",
            f"{r.rss_end:.0f} MB",
            f"{r.load:.1f}",
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--teams", type=int, default=1000)
    parser.add_argument("--per-team", type=int, default=3)
    parser.add_argument("--distinct", type=int, default=100, help="runs scored through the services, then copied")
    parser.add_argument("--database", default=None, help="a PostgreSQL URL (its database is emptied); default SQLite")
    parser.add_argument("--landings", type=int, default=5)
    parser.add_argument("--readers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--every", type=float, default=2.0)
    parser.add_argument("--check-every", type=float, default=2.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.database:
            database = Database(args.database)
            with database.engine.begin() as connection:
                connection.execute(text("DROP SCHEMA public CASCADE"))
                connection.execute(text("CREATE SCHEMA public"))
            database.dispose()
            url, label = args.database, "PostgreSQL"
        else:
            url, label = f"sqlite:///{os.path.join(folder, 'bench.db')}", "SQLite"
        run = measure(url, label, args)
    print(f"seeded in {run.seed_s:.0f} s")
    text_ = table([run])
    print(text_)


if __name__ == "__main__":
    main()
