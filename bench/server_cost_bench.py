"""Server cost benchmark: what the server itself spends on one test-size submission once the gold is parsed and cached.

What a participant waits for after an upload, besides queueing: the upload's own work and the scoring job's. For
each scorer, a phase on a fresh SQLite database (made through the migrations) holds the benchmark's 1x gold
(``bench.score_inputs``: the release-derived test-size inputs of ``bench/score_bench.py``; for the generic
``classification`` and ``regression`` scorers, generated files of ``GENERIC_ROWS`` rows with the options of their
example bundles), and this process runs the real services, as the server's threads do:

* upload: ``intake.submit`` (the phase, the user, the size and the quota checked, the file validated against the
  gold's public view, the blob and a ``queued`` row stored) and its commit;
* job: ``score_submission`` (claim and read the file, validate it again and compute, the primary metric's interval
  when the phase shows intervals, store the score), each step in its own transaction as in a worker;
* inside the job, timed apart on the same cached gold: ``compute`` (validation + ``Scorer.compute``) and ``interval``.

Two modes, each on a database of its own: ``embedded`` as ``podium serve`` runs by default (the upload's parse
handed to the job in the same process, ``app.services.scoring.handoff``), and ``distributed`` (the job, as in a
worker process, validates the blob again).

A first submission per scorer warms the gold cache and is not counted; then ``--repeat`` submissions are measured,
and each column is the median. Wall milliseconds, and in brackets this process's CPU milliseconds (what the step costs
on an idle core; on a shared machine the wall time also holds waiting for a core). The goal: upload + job under 50 ms.

    .venv/bin/python bench/server_cost_bench.py [--repeat 7] [--scorers a,b] [--markdown]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from app.config import Settings  # noqa: E402
from app.services.accounts import users  # noqa: E402
from app.services.bundles.spec import BundleFile, CompetitionSpec, PhaseSpec, TaskSpec  # noqa: E402
from app.services.competitions import catalog  # noqa: E402
from app.services.jobs.kinds import JobContext  # noqa: E402
from app.services.scoring import steps  # noqa: E402
from app.services.scoring.gold import GoldCache  # noqa: E402
from app.services.scoring.handoff import ParsedSubmissions  # noqa: E402
from app.services.scoring.job import score_submission  # noqa: E402
from app.services.submissions import intake  # noqa: E402
from app.storage.db import Database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402
from app.storage.models import Submission  # noqa: E402
from bench.score_inputs import build_inputs  # noqa: E402

SEED_AND_TREC = (
    "svident-detection",
    "svident-disambiguation",
    "scier-ere",
    "scier-re",
    "famus-cdae",
    "famus-sv",
    "trec",
)
SCORERS = (*SEED_AND_TREC, "classification", "regression")
#: Rows of the generated gold of the generic classification and regression scorers (test-size for such tasks).
GENERIC_ROWS = 2000
GOAL_MS = 50.0
PASSWORD = "bench password"
MB = 1024 * 1024
T = TypeVar("T")


@dataclass(frozen=True)
class Inputs:
    scorer: str
    options: dict[str, Any]
    gold_name: str
    gold: bytes
    submission_name: str
    submission: bytes


@dataclass
class Row:
    scorer: str
    size: int
    upload: tuple[float, float]
    job: tuple[float, float]
    mode: str
    compute: tuple[float, float]
    interval: tuple[float, float]
    statuses: list[str]

    @property
    def total(self) -> tuple[float, float]:
        return self.upload[0] + self.job[0], self.upload[1] + self.job[1]


def shared_dir() -> Path:
    return Path(os.environ.get("PODIUM_SHARED_DIR") or ROOT.parent / "shared").resolve()


def generic_inputs(scorer: str, rows: int = GENERIC_ROWS, seed: int = 7) -> Inputs:
    """A gold TSV and a submission TSV of ``rows`` ids, in the layout of the example bundle of ``scorer``."""
    rng = random.Random(seed)
    groups = ("kitchen", "garden", "books", "toys")
    if scorer == "classification":
        labels = ("negative", "neutral", "positive")
        gold = [(f"r{i:05d}", rng.choice(groups), rng.choice(labels)) for i in range(rows)]
        gold_text = "id\tdomain\ttext\tlabel\n" + "".join(f"{i}\t{g}\tsome review text\t{y}\n" for i, g, y in gold)
        guess = [(i, y if rng.random() < 0.7 else rng.choice(labels)) for i, _, y in gold]
        options: dict[str, Any] = {
            "format": "tsv",
            "id_column": "id",
            "label_column": "label",
            "labels": list(labels),
            "average": "macro",
            "group_by": ["domain"],
        }
        submission = "id\tlabel\n" + "".join(f"{i}\t{y}\n" for i, y in guess)
    else:
        pairs = [(f"p{i:05d}", rng.choice(groups), round(rng.uniform(0, 5), 2)) for i in range(rows)]
        gold_text = "id\tsource\tsentence1\tsentence2\tvalue\n" + "".join(
            f"{i}\t{g}\tone sentence\tanother sentence\t{v}\n" for i, g, v in pairs
        )
        options = {"format": "tsv", "id_column": "id", "value_column": "value", "primary_metric": "pearson"}
        options["group_by"] = ["source"]
        submission = "id\tvalue\n" + "".join(f"{i}\t{round(v + rng.gauss(0, 0.8), 3)}\n" for i, _, v in pairs)
    return Inputs(scorer, options, "gold.tsv", gold_text.encode(), "submission.tsv", submission.encode())


def inputs_for(scorer: str, workdir: Path) -> Inputs:
    if scorer in ("classification", "regression"):
        return generic_inputs(scorer)
    gold, submission = build_inputs(scorer, shared_dir()).write(workdir / scorer, 1)
    return Inputs(scorer, {}, gold.name, gold.read_bytes(), submission.name, submission.read_bytes())


def competition(all_inputs: Sequence[Inputs]) -> CompetitionSpec:
    tasks = []
    for item in all_inputs:
        file = BundleFile(item.gold_name, item.gold, hashlib.sha256(item.gold).hexdigest())
        phase = PhaseSpec("test", "Test", "", None, None, file, (), None, None, "public", "best", 256 * MB)
        tasks.append(TaskSpec(item.scorer, item.scorer, "", item.scorer, item.options, (), (), (phase,)))
    return CompetitionSpec("bench", "Server cost benchmark", "", (), "open", tuple(tasks))


def timed(step: Callable[[], T]) -> tuple[T, float, float]:
    """``step()`` with its wall and CPU milliseconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = step()
    return out, 1000 * (time.perf_counter() - wall), 1000 * (time.process_time() - cpu)


def median_pair(pairs: Sequence[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


class Server:
    """The services of one server process on a fresh database: the settings, a gold cache and a job context."""

    def __init__(self, url: str, spec: CompetitionSpec, *, embedded: bool) -> None:
        self.db = Database(url)
        upgrade(self.db.engine)
        self.settings = Settings(database_url=url, max_upload_bytes=256 * MB)
        self.gold_cache = GoldCache()
        self.handoff = ParsedSubmissions() if embedded else None
        self.mode = "embedded" if embedded else "distributed"
        self.ctx = JobContext(self.db, self.settings, self.gold_cache, handoff=self.handoff)
        with self.db.session() as session:
            catalog.create_competition(session, spec)
            self.user = users.create_user(session, "bench", PASSWORD)
            session.commit()
            self.user_id = self.user.id

    def upload(self, scorer: str, inputs: Inputs) -> int:
        with self.db.session() as session:
            user = session.get(type(self.user), self.user_id)
            accepted = intake.submit(
                session,
                user,
                ("bench", scorer, "test"),
                intake.Upload(inputs.submission, inputs.submission_name),
                limits=self.ctx.limits,
                gold_cache=self.gold_cache,
                handoff=self.handoff,
            )
            session.commit()
            return int(accepted.submission.id)

    def status(self, submission_id: int) -> str:
        with self.db.session(read_only=True) as session:
            return str(session.get(Submission, submission_id).status)

    def measure(self, inputs: Inputs, repeat: int) -> Row:
        first = self.upload(inputs.scorer, inputs)  # parses the gold into the cache
        score_submission(self.ctx, first)
        uploads, jobs, computes, intervals, statuses = [], [], [], [], [self.status(first)]
        for _ in range(repeat):
            submission_id, *upload = timed(lambda: self.upload(inputs.scorer, inputs))
            _, *job = timed(lambda: score_submission(self.ctx, submission_id))  # noqa: B023 (called at once)
            uploads.append(tuple(upload))
            jobs.append(tuple(job))
            statuses.append(self.status(submission_id))
            held = self.claim_of(submission_id)
            gold = steps.cached_gold(held, self.gold_cache)
            assert gold is not None, "the gold left the cache"
            report, *compute = timed(lambda: steps.compute(gold, inputs.submission, limits=self.ctx.limits))  # noqa: B023
            computes.append(tuple(compute))
            _, *spent = timed(lambda: steps.interval(gold, held, report))  # noqa: B023
            intervals.append(tuple(spent))
        return Row(
            inputs.scorer,
            len(inputs.submission),
            median_pair(uploads),
            median_pair(jobs),
            self.mode,
            median_pair(computes),
            median_pair(intervals),
            statuses,
        )

    def claim_of(self, submission_id: int) -> steps.Claim:
        with self.db.session(read_only=True) as session:
            row = session.get(Submission, submission_id)
            return steps.Claim(submission_id, 1, row.scoring_round, row.blob_id, steps.gold_of(session, row.phase_id))


def render(rows: Sequence[Row], markdown: bool) -> str:
    def cell(pair: tuple[float, float]) -> str:
        return f"{pair[0]:.1f} ({pair[1]:.1f})"

    header = [
        "scorer",
        "mode",
        "submission KB",
        "upload ms",
        "job ms",
        "upload + job ms",
        "of which compute",
        "of which interval",
        "goal 50 ms",
        "scored",
    ]
    lines = []
    for row in rows:
        met = "met" if row.total[1] < GOAL_MS else "MISSED"
        scored = f"{sum(s == 'scored' for s in row.statuses)}/{len(row.statuses)}"
        cells = [row.scorer, row.mode, f"{row.size / 1024:.0f}", cell(row.upload), cell(row.job), cell(row.total)]
        lines.append([*cells, cell(row.compute), cell(row.interval), met, scored])
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
        out += ["| " + " | ".join(line) + " |" for line in lines]
        return "\n".join(out)
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in lines]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="measured submissions per scorer (median shown)")
    parser.add_argument("--scorers", default=",".join(SCORERS), help="comma-separated scorer names (default all)")
    parser.add_argument(
        "--modes", default="embedded,distributed", help="comma-separated: embedded (parse handed over), distributed"
    )
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)
    names = [s for s in args.scorers.split(",") if s]
    unknown = sorted(set(names) - set(SCORERS))
    if unknown or args.repeat < 1:
        parser.error(
            f"unknown scorer(s) {', '.join(unknown)}; known: {', '.join(SCORERS)}" if unknown else "--repeat >= 1"
        )
    if set(args.modes.split(",")) - {"embedded", "distributed", ""}:
        parser.error("--modes takes embedded and/or distributed")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load}; {args.repeat} measured submissions per scorer\n", flush=True)
    with tempfile.TemporaryDirectory(prefix="podium-server-cost-") as tmp:
        all_inputs = [inputs_for(name, Path(tmp)) for name in names]
        modes = [m for m in args.modes.split(",") if m]
        servers = [
            Server(f"sqlite:///{tmp}/podium-{mode}.sqlite3", competition(all_inputs), embedded=mode == "embedded")
            for mode in modes
        ]
        rows = []
        for inputs in all_inputs:
            print(f"{inputs.scorer}: {len(inputs.submission) / 1024:.0f} KB", file=sys.stderr, flush=True)
            rows += [server.measure(inputs, args.repeat) for server in servers]
        for server in servers:
            server.db.dispose()
    print(render(rows, args.markdown))
    print(f"\nwall ms (CPU ms of this process), medians; goal: upload + job under {GOAL_MS:.0f} ms of CPU")
    print(json.dumps({"load_after": os.getloadavg()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
