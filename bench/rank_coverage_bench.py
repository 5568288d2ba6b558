"""Coverage of the mean-rank intervals and size of the mean-rank comparisons (``leaderboard/rank_uncertainty.py``),
by simulation.

Four systems, two metrics (each a mean of per-document values), n documents: each document has a difficulty shared
by every system (what makes comparisons paired) and each system its own noise (standard deviation 1 for both). The
true mean rank of a system is the mean of its fractional ranks on the two metrics' true means. For each scenario and
n: how often each system's 95% interval held its true mean rank, and how often the comparison of the last pair
(equal true means, or the closest pair) and of the first pair (the test's power where they differ) was called
significant.

    .venv/bin/python bench/rank_coverage_bench.py [--sims 400]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from leaderboard.multi import metric_ranks  # noqa: E402
from leaderboard.rank_uncertainty import rank_uncertainty  # noqa: E402
from leaderboard.resampling import UnitStats  # noqa: E402
from scorers.families import weighted  # noqa: E402

METRICS = ("x", "y")
#: name: each system's true means of the two metrics (the last two systems are the pair whose test is counted).
SCENARIOS: dict[str, tuple[tuple[float, float], ...]] = {
    "apart, last two equal": ((1.0, 1.0), (0.5, 0.5), (0.0, 0.0), (0.0, 0.0)),
    "close (0.1 apart)": ((0.3, 0.3), (0.2, 0.2), (0.1, 0.1), (0.0, 0.0)),
    "crossing metrics, all equal": ((1.0, 0.0), (0.0, 1.0), (0.5, 0.5), (0.5, 0.5)),
}


class TwoMeans:
    """The two metrics: means of the documents' values (vectorized)."""

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return {m: sum(float(s[m]) for s in stats) / len(stats) for m in METRICS}

    def stratum(self, unit: UnitStats) -> None:
        return None

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> weighted.WeightedMetric:
        return weighted.nested_mean(weighted.unit_column(stats, metric), [() for _ in stats])


@dataclass(frozen=True)
class Result:
    true: tuple[float, ...]
    coverage: tuple[float, ...]
    #: Share of simulations in which the last pair (when neighbours on the board) was called significant.
    called: float
    #: The same for the first pair (unequal in every scenario but the last: the test's power).
    first_called: float


def mean_ranks(values: Sequence[Sequence[float]]) -> list[float]:
    columns = [metric_ranks([v[m] for v in values], True, "average") for m in range(len(METRICS))]
    return [sum(c[i] for c in columns) / len(columns) for i in range(len(values))]


def measure(
    n: int, means: Sequence[tuple[float, float]], sims: int, *, seed: int = 0, replicates: int = 1000
) -> Result:
    rng = np.random.default_rng(seed)
    true = mean_ranks(means)
    covered = np.zeros(len(means))
    called = pairs = first_called = first_pairs = 0
    last = {len(means) - 2, len(means) - 1}
    for sim in range(sims):
        difficulty = rng.normal(0, 1, (n, len(METRICS)))
        units = []
        for mean in means:
            values = difficulty + np.asarray(mean) + rng.normal(0, 1, (n, len(METRICS)))
            units.append({f"d{u:04d}": dict(zip(METRICS, map(float, values[u]), strict=True)) for u in range(n)})
        observed = [TwoMeans().aggregate(list(u.values())) for u in units]
        estimate = mean_ranks([[o[m] for m in METRICS] for o in observed])
        order = sorted(range(len(means)), key=lambda i: estimate[i])
        entries = [(i, estimate[i], dict(observed[i]), units[i]) for i in order]
        board = rank_uncertainty(
            TwoMeans(), entries, METRICS, dict.fromkeys(METRICS, True), "average", seed=sim, replicates=replicates
        )
        assert board is not None
        for i in range(len(means)):
            interval = board.intervals[i]
            assert interval.low is not None and interval.high is not None
            covered[i] += interval.low - 1e-9 <= true[i] <= interval.high + 1e-9
        for comparison in board.comparisons:
            if {comparison.better, comparison.worse} == last:
                pairs += 1
                called += comparison.significant
            if {comparison.better, comparison.worse} == {0, 1}:
                first_pairs += 1
                first_called += comparison.significant
    return Result(
        tuple(true),
        tuple(float(c) for c in covered / sims),
        called / max(1, pairs),
        first_called / max(1, first_pairs),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sims", type=int, default=400)
    args = parser.parse_args()
    print(
        "| scenario | n | true mean ranks | coverage of each system's 95% interval | last pair called different "
        "| first pair called different |"
    )
    print("|---|---:|---|---|---:|---:|")
    for name, means in SCENARIOS.items():
        for n in (10, 30, 100):
            r = measure(n, means, args.sims, seed=n)
            true = ", ".join(f"{t:g}" for t in r.true)
            coverage = ", ".join(f"{c:.0%}" for c in r.coverage)
            print(f"| {name} | {n} | {true} | {coverage} | {r.called:.1%} | {r.first_called:.1%} |", flush=True)


if __name__ == "__main__":
    main()
