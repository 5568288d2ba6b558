"""Uncertainty benchmark: the cost of a submission's interval and of a board's paired comparisons.

For each seed scorer, ``--units`` unit statistics shaped as that scorer stores them (SV-Ident groups in
two languages, SciER and FAMuS documents, FAMuS instances) with varied values, then:

* per submission: ``bootstrap_interval`` of the primary metric with ``--replicates`` replicates (expanded
  BCa, the default, jackknife included), through the scorer's vectorized hook; and the same replicates
  through the generic fallback (``aggregate`` on each replicate's repeated units, percentile only), which is
  what a scorer without the hook costs;
* per page: the neighbour comparisons of a board of ``--entries`` systems (paired bootstrap test of equal
  means with ``--trials`` replicates per pair, Holm, tied groups), all pairs computed (a cold board),
  and the two pairs a newly ranked entry adds when the others are remembered.

Times are medians of ``--repeat`` runs in this process: wall seconds, and the process's CPU seconds.

    .venv/bin/python bench/uncertainty_bench.py [--units 3000] [--replicates 4000] [--entries 30] [--write-results]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from leaderboard.bootstrap import bootstrap_interval  # noqa: E402
from leaderboard.significance import compare_neighbours, tied_groups  # noqa: E402
from scorers import Scorer, get_scorer  # noqa: E402

RESULTS = ROOT / "bench" / "RESULTS.md"
HEADING = "## Uncertainty: intervals and comparisons (bench/uncertainty_bench.py)"
Units = dict[str, dict[str, Any]]


def _triple(rng: np.random.Generator, quality: float) -> list[int]:
    gold, predicted = 1 + int(rng.poisson(8)), 1 + int(rng.poisson(7))
    return [int(rng.binomial(min(gold, predicted), quality)), predicted, gold]


def _svident(rng: np.random.Generator, i: int, quality: float, metrics: tuple[str, ...]) -> dict[str, Any]:
    values = {m: float(np.clip(rng.beta(8 * quality, 8 * (1 - quality)), 0, 1)) for m in metrics}
    return {"language": "de" if i % 3 else "en", "document": f"doc{i}", "sentences": 12, **values}


def make_units(scorer: str, n: int, quality: float, seed: int) -> Units:
    """``n`` units of ``scorer`` for a system of the given quality (0 to 1)."""
    rng = np.random.default_rng(seed)
    out: Units = {}
    for i in range(n):
        if scorer == "svident-detection":
            unit = _svident(rng, i, quality, ("precision", "recall", "f1"))
        elif scorer == "svident-disambiguation":
            unit = _svident(rng, i, quality, ("map@1", "map@5", "map@10", "map@20", "r_precision"))
        elif scorer == "scier-ere":
            ner, rel = _triple(rng, quality), _triple(rng, quality)
            plus = [min(rel[0], ner[0]), rel[1], rel[2]]
            labels = {"USED-FOR": rel}
            unit = {"ner": ner, "rel": rel, "rel_plus": plus, "ner_by_type": {"Method": ner}}
            unit |= {"rel_by_label": labels, "rel_plus_by_label": {"USED-FOR": plus}}
        elif scorer == "scier-re":
            rel = _triple(rng, quality)
            unit = {"re": rel, "re_by_label": {"USED-FOR": rel}}
        elif scorer == "famus-cdae":
            correct, predicted, gold = _triple(rng, quality)
            soft = correct + float(rng.random()) * (min(predicted, gold) - correct)
            sums = {"predicted": predicted, "gold": gold, "phi3": float(correct), "soft": soft}
            unit = {**sums, "roles": {"Agent": dict(sums)}}
        elif scorer == "famus-sv":
            gold = int(rng.random() < 0.5)
            unit = {"gold": gold, "predicted": gold if rng.random() < quality else 1 - gold}
        else:
            raise KeyError(scorer)
        key = f"{unit['language']}/doc{i}" if "language" in unit else f"doc{i}"
        out[key] = unit
    return out


SCORERS = ("svident-detection", "svident-disambiguation", "scier-ere", "scier-re", "famus-cdae", "famus-sv")


class Fallback:
    """A scorer without the vectorized hook: every replicate goes through ``aggregate``."""

    def __init__(self, scorer: Scorer[Any, Any]) -> None:
        self.scorer = scorer

    def aggregate(self, stats: Any) -> dict[str, float]:
        return self.scorer.aggregate(stats)

    def stratum(self, unit: Any) -> str | None:
        return self.scorer.stratum(unit)

    def weighted_metric(self, stats: Any, metric: str) -> None:
        return None


@dataclass(frozen=True)
class Timing:
    """Median wall and CPU seconds of a few runs (CPU: this process's, all its threads)."""

    wall: float
    cpu: float

    def show(self, unit: str = "s") -> str:
        scale = 1000 if unit == "ms" else 1
        digits = 0 if unit == "ms" else 2
        return f"{self.wall * scale:.{digits}f} {unit} ({self.cpu * scale:.{digits}f})"


def timed(function: Callable[[], object], repeat: int) -> Timing:
    walls, cpus = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        function()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    return Timing(statistics.median(walls), statistics.median(cpus))


def measure(name: str, args: argparse.Namespace) -> str:
    """One table row: the costs for one scorer."""
    scorer = get_scorer(name)
    metric = scorer.primary_metric
    units = make_units(name, args.units, 0.6, 1)
    vectorized = timed(lambda: bootstrap_interval(scorer, units, metric, replicates=args.replicates), args.repeat)
    loop = Timing(float("nan"), float("nan"))
    if args.fallback:
        slow = Fallback(scorer)
        replicates = args.replicates
        loop = timed(lambda: bootstrap_interval(slow, units, metric, replicates=replicates, method="percentile"), 1)
    board = [(k, make_units(name, args.units, 0.7 - 0.004 * k, 100 + k)) for k in range(args.entries)]
    comparisons: list[Any] = []

    def cold() -> None:
        comparisons[:] = compare_neighbours(scorer, board, metric, trials=args.trials)

    page = timed(cold, args.repeat)
    new_entry = timed(lambda: compare_neighbours(scorer, board[:3], metric, trials=args.trials), args.repeat)
    groups = len(tied_groups([k for k, _ in board], comparisons))
    return (
        f"| {name} | {args.units:,} | {vectorized.show('ms')} | {loop.show()} | {page.show()} | "
        f"{new_entry.show('ms')} | {groups} |"
    )


def run(args: argparse.Namespace) -> list[str]:
    lines = [
        "| scorer | units | interval (vectorized) | interval (fallback loop) | board of "
        f"{args.entries}: all {args.entries - 1} pairs | one new entry: 2 pairs | tied groups found |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in args.scorers:
        lines.append(measure(name, args))
        print(lines[-1], flush=True)
    return lines


def write_results(lines: list[str], args: argparse.Namespace, command: str, load: float) -> None:
    section = "\n".join(
        [
            HEADING,
            "",
            f"Measured on {datetime.now(UTC):%Y-%m-%d}, nproc {os.cpu_count()}, Python {platform.python_version()}, "
            f"numpy {np.__version__}, load average {load:.1f} at the start (the machine is shared with other work).",
            "",
            "```sh",
            command,
            "```",
            "",
            f"{args.replicates:,} bootstrap replicates per interval (expanded BCa with its jackknife; the fallback "
            f"loop computes a percentile interval, without jackknife), {args.trials:,} paired bootstrap replicates "
            f"per compared pair; medians of {args.repeat} runs in one process, wall seconds and, in brackets, CPU "
            "seconds of the process (what the work costs on an idle core; numpy's BLAS may use both cores).",
            "",
            *lines,
            "",
        ]
    )
    text = RESULTS.read_text()
    if HEADING in text:
        start = text.index(HEADING)
        end = text.find("\n## ", start + len(HEADING))
        text = text[:start] + section + (text[end + 1 :] if end != -1 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=3000)
    parser.add_argument("--replicates", type=int, default=4000)
    parser.add_argument("--entries", type=int, default=30)
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scorers", type=lambda s: s.split(","), default=list(SCORERS))
    parser.add_argument("--no-fallback", dest="fallback", action="store_false", help="skip the slow generic loop")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    lines = run(args)
    if args.write_results:
        write_results(lines, args, ".venv/bin/python bench/uncertainty_bench.py " + " ".join(sys.argv[1:]), load)


if __name__ == "__main__":
    main()
