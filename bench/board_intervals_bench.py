"""What intervals cost the application: per scored submission, and per leaderboard page, at ``--units`` units.

For each scorer, a fresh SQLite database through the migrations holds one phase with ``--entries`` teams,
each with one scored submission whose stored score has ``--units`` unit statistics shaped as that scorer
stores them (``bench.uncertainty_bench.make_units``; systems of slightly different quality, so some are
tied), then:

* per submission: the scoring job's ``steps.interval`` on a report of that many units (what the job adds
  to scoring: the primary metric's expanded BCa interval, 1,000 replicates, the phase's seed);
* per page, when the board is built (something changed, so the cached board is stale): ``compute_snapshot``
  of the public board with intervals off (the ranking alone); with intervals on, nothing kept (the first
  board of a process: every entry's units read, every neighbour pair tested); after one more score landed
  in the middle of the board (the comparisons of earlier boards kept: the units of three entries read, two
  pairs tested); and on scores stored without intervals, nothing kept (each interval computed from its
  units as well: the first board after upgrading);
* per page view between changes: ``BoardCache.get`` of a fresh snapshot (what every other page load costs).

Times are medians of ``--repeat`` runs: wall seconds, and in brackets this process's CPU seconds.

    .venv/bin/python bench/board_intervals_bench.py [--units 3000] [--entries 30] [--write-results]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from sqlalchemy import update  # noqa: E402

from app.services.accounts import teams, users  # noqa: E402
from app.services.boards.cache import BoardCache  # noqa: E402
from app.services.boards.snapshot import compute_snapshot  # noqa: E402
from app.services.boards.uncertainty import Kept  # noqa: E402
from app.services.bundles.spec import BundleFile, CompetitionSpec, PhaseSpec, TaskSpec  # noqa: E402
from app.services.competitions import catalog  # noqa: E402
from app.services.scoring import steps  # noqa: E402
from app.services.scoring.gold import GoldRef, ParsedGold  # noqa: E402
from app.storage.blobs import put_blob, sha256_hex  # noqa: E402
from app.storage.db import Database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402
from app.storage.models import Phase, Score, Submission, SubmissionStatus  # noqa: E402
from bench.results_md import replace_section  # noqa: E402
from bench.uncertainty_bench import SCORERS, Timing, make_units, timed  # noqa: E402
from leaderboard.uncertainty import interval_for, interval_record, phase_seed  # noqa: E402
from scorers import Scorer, ScoreReport, get_scorer  # noqa: E402

PASSWORD_HASH = users.hash_password("benchmark password")
RESULTS = ROOT / "bench" / "RESULTS.md"
HEADING = "## Intervals in the application: per submission and per page (bench/board_intervals_bench.py)"
REF = ("bench", "task", "test")
#: Any gold the scorer parses: the board reads stored scores only, never the gold.
GOLDS = {
    "svident-detection": ROOT / "examples/svident/data/test.tsv",
    "svident-disambiguation": ROOT / "examples/svident/data/test.tsv",
    "scier-ere": ROOT / "examples/scier/data/test.jsonl",
    "scier-re": ROOT / "examples/scier/data/test.jsonl",
    "famus-cdae": ROOT / "examples/famus/data/source-gold.jsonl",
    "famus-sv": ROOT / "examples/famus/data/sv-test.jsonl",
}


def _file(path: Path) -> BundleFile:
    data = path.read_bytes()
    return BundleFile(name=path.name, data=data, sha256=sha256_hex(data))


def seed(database: Database, name: str, scorer: Scorer[Any, Any, Any], args: argparse.Namespace) -> int:
    """The phase and its ``--entries`` scored submissions, intervals stored; returns the phase id."""
    phase = PhaseSpec("test", "Test", "", None, None, _file(GOLDS[name]), (), None, None, "public", "best", None)
    task = TaskSpec("task", "Task", "", name, {}, (), (), (phase,))
    spec = CompetitionSpec("bench", "Benchmark", "", (), "open", (task,))
    with database.session() as session:
        catalog.create_competition(session, spec)
        phase_id = catalog.get_phase(session, *REF).id
        session.commit()
    for k in range(args.entries):
        add_entry(database, name, scorer, args, k, 0.7 - 0.004 * k)
    return phase_id


def add_entry(
    database: Database, name: str, scorer: Scorer[Any, Any, Any], args: argparse.Namespace, k: int, quality: float
) -> None:
    """Team ``k`` with one scored submission of ``quality``, its interval stored as the scoring job stores it."""
    metric = scorer.primary_metric
    with database.session() as session:
        competition = catalog.get_competition(session, REF[0])
        phase_id = catalog.get_phase(session, *REF).id
        blob = put_blob(session, b"{}", sha256_hex(b"{}"))
        user = users.create_user(session, f"user{k:03d}", "", password_hash=PASSWORD_HASH)
        team = teams.create_team(session, user, competition, f"Team {k:03d}")
        units = make_units(name, args.units, quality, 100 + k)
        submission = Submission(
            phase_id=phase_id,
            team_id=team.id,
            user_id=user.id,
            blob_id=blob.id,
            sha256=blob.sha256,
            size=2,
            original_name="run.json",
            status=SubmissionStatus.SCORED,
        )
        session.add(submission)
        session.flush()
        record = interval_record(interval_for(scorer, units, metric, seed=phase_seed(*REF)), metric)
        session.add(
            Score(
                submission_id=submission.id,
                round=1,
                scorer=name,
                scorer_version=scorer.version,
                metrics=scorer.aggregate(list(units.values())),
                breakdown={},
                units=units,
                interval=record,
            )
        )
        session.commit()


def per_submission(name: str, scorer: Scorer[Any, Any, Any], args: argparse.Namespace) -> Timing:
    """The scoring job's interval step on a report of ``--units`` units."""
    units = make_units(name, args.units, 0.6, 1)
    report = ScoreReport(name, scorer.version, scorer.aggregate(list(units.values())), {}, units)
    gold = ParsedGold(scorer, None, None)
    ref = GoldRef(0, 0, "", name, {}, seed=phase_seed(*REF), intervals=True)
    held = steps.Claim(submission_id=1, attempt=1, round=1, blob_id=0, gold=ref)
    return timed(lambda: steps.interval(gold, held, report), args.repeat)


def per_page(
    database: Database, name: str, scorer: Scorer[Any, Any, Any], phase_id: int, args: argparse.Namespace
) -> dict[str, Any]:
    def board(kept: Kept | None = None) -> Any:
        with database.session(read_only=True) as session:
            phase = session.get(Phase, phase_id)
            assert phase is not None
            return compute_snapshot(session, phase, "public", 0, kept=kept)

    def change(**values: Any) -> None:
        with database.session() as session:
            if "intervals" in values:
                session.execute(update(Phase).where(Phase.id == phase_id).values(intervals=values["intervals"]))
            if "interval" in values:
                session.execute(update(Score).values(interval=None).execution_options(synchronize_session=False))
            session.commit()

    out: dict[str, Any] = {}
    change(intervals=False)
    out["off"] = timed(board, args.repeat)
    change(intervals=True)
    out["cold"] = timed(board, args.repeat)  # nothing kept: the first board of a process
    kept = Kept()
    board(kept)
    added = iter(range(args.entries, args.entries + args.repeat))

    def one_landed() -> Any:
        # A new team ranked in the middle of the board: two new neighbour pairs, the others kept.
        add_entry(database, name, scorer, args, next(added), 0.7 - 0.002 * args.entries)
        start = time.perf_counter(), time.process_time()
        snapshot = board(kept)
        return snapshot, time.perf_counter() - start[0], time.process_time() - start[1]

    landed = [one_landed() for _ in range(args.repeat)]
    assert all(s.uncertainty.tested <= 2 for s, _, _ in landed), [s.uncertainty.tested for s, _, _ in landed]
    out["landed"] = Timing(statistics.median(w for _, w, _ in landed), statistics.median(c for _, _, c in landed))
    out["groups"] = len(landed[-1][0].uncertainty.groups)
    cache = BoardCache(database)
    cache.get(REF, "public")
    out["cached"] = timed(lambda: cache.get(REF, "public"), max(args.repeat, 100))
    change(interval=None)
    out["backfill"] = timed(board, args.repeat)
    assert board().uncertainty.computed == args.entries + args.repeat
    return out


def measure(name: str, args: argparse.Namespace, folder: Path) -> str:
    scorer = get_scorer(name)
    database = Database(f"sqlite:///{folder / f'{name}.sqlite3'}")
    upgrade(database.engine)
    try:
        phase_id = seed(database, name, scorer, args)
        submission = per_submission(name, scorer, args)
        page = per_page(database, name, scorer, phase_id, args)
    finally:
        database.dispose()
    cached = page["cached"]
    return (
        f"| {name} | {args.units:,} | {submission.show('ms')} | {page['off'].show()} | {page['cold'].show()} | "
        f"{page['landed'].show()} | {page['backfill'].show()} | {cached.wall * 1e6:.1f} µs | {page['groups']} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=3000)
    parser.add_argument("--entries", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scorers", nargs="+", default=list(SCORERS), choices=SCORERS)
    parser.add_argument("--write-results", action="store_true", help=f"replace its section of {RESULTS}")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    lines = [
        "| scorer | units | per submission: the job's interval | board built, intervals off | intervals on, "
        "first board of a process | on, after a score landed | on, no interval stored | page between changes "
        "(cached) | tied groups |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory(prefix="podium-intervals-") as folder:
        for name in args.scorers:
            lines.append(measure(name, args, Path(folder)))
            print(lines[-1], flush=True)
    if args.write_results:
        command = "    .venv/bin/python bench/board_intervals_bench.py --write-results"
        body = "\n".join(
            [
                f"Measured on {datetime.now(UTC):%Y-%m-%d}, nproc {os.cpu_count()}, Python "
                f"{platform.python_version()}, SQLite, load average {load:.1f} at the start (the machine is shared).",
                "",
                command,
                "",
                f"{args.entries} entries of {args.units:,} units each; medians of {args.repeat} runs, wall seconds and "
                "in brackets CPU seconds of the process. A board is built once per change (a score landing, a "
                "choice, a reveal); every other page load is served from the cached snapshot.",
                "",
                *lines,
            ]
        )
        RESULTS.write_text(replace_section(RESULTS.read_text(), HEADING, body))


if __name__ == "__main__":
    main()
