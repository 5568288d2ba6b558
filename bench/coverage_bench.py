"""Coverage bench: how often the board's 95% intervals hold the true score, and how often its comparisons call
a system better when it is not, before and after the methods of ``docs/STATISTICS.md``.

Each scenario draws many simulated phases from a known population, computes what a board shows, and counts:

* small strata: a score averaged per language then over languages (SV-Ident's groups), with 29 + 1, 99 + 1 and
  27 + 3 groups; every language's groups drawn from one population (30% perfect, 10% failed, the rest
  Beta(5, 3)). Before: the stratified bootstrap as it was; after: small strata pooled (``leaderboard.strata``).
* tiny phases: 2 to 6 documents, per-document means from the same population. Coverage of the (unchanged)
  interval, which is how such intervals are labelled; and how often a comparison of two equal systems is
  reported at all (after: never at 5 units or fewer, "too few to compare").
* selection: team A is the best of k runs (5, 20) on the same 30 documents, team B one run, all with the same
  true mean. Before: A's interval and the plain test; after: the Bonferroni widening and the p-value times k.
* unequal noise: two systems with equal means and unlike errors (micro F1 of a precise and a greedy system;
  per-document scores, one steady, one with skewed noise), N = 10 and 30. Before: paired approximate
  randomization; after: the paired bootstrap test of equal means.

    .venv/bin/python bench/coverage_bench.py [--trials 400] [--write-results]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from bench.results_md import replace_section  # noqa: E402
from leaderboard.bootstrap import for_selection, interval_of  # noqa: E402
from leaderboard.resampling import Statistic, bootstrap_counts  # noqa: E402
from leaderboard.significance import paired_test  # noqa: E402
from tests.leaderboard.systems import MeanOf, MicroF1, count_units, mean_units  # noqa: E402

Units = Any
RESULTS = ROOT / "bench" / "RESULTS.md"
HEADING = "## Coverage of intervals and comparisons (bench/coverage_bench.py)"
TRUTH = 0.3 + 0.6 * 5 / 8  # the population's mean
REPLICATES = 2000


def population(rng: np.random.Generator, n: int) -> np.ndarray:
    u = rng.random(n)
    return np.where(u < 0.3, 1.0, np.where(u < 0.4, 0.0, rng.beta(5, 3, n)))


def covered(low: float | None, high: float | None, truth: float) -> bool:
    return low is not None and high is not None and low <= truth <= high


def interval_pair(units: Units, scorer: MeanOf, seed: int) -> tuple[object, object]:
    """The interval as it was (no pooling) and as it is, from the same replicates."""
    statistic = Statistic.of(scorer, units, "mean")
    values = statistic(bootstrap_counts(statistic.strata, REPLICATES, seed))
    before = interval_of(statistic, values, level=0.95, method="bca-expanded", pool_small=False)
    after = interval_of(statistic, values, level=0.95, method="bca-expanded")
    return before, after


def small_strata(trials: int) -> list[str]:
    rows = []
    scorer = MeanOf(by_language=True)
    for sizes in ((29, 1), (99, 1), (27, 3)):
        rng = np.random.default_rng([1, *sizes])
        hits = [0, 0]
        for trial in range(trials):
            langs = [lang for lang, size in zip("ab", sizes, strict=True) for _ in range(size)]
            units = mean_units(population(rng, sum(sizes)).tolist(), langs)
            for i, interval in enumerate(interval_pair(units, scorer, trial)):
                hits[i] += covered(interval.low, interval.high, TRUTH)  # type: ignore[attr-defined]
        rows.append(f"| small strata {'+'.join(map(str, sizes))} | interval coverage | {_pct(hits, trials)} |")
    return rows


def randomization_p(a: Units, b: Units, trials: int, seed: int) -> float:
    """The paired approximate randomization test the board used before (swap each unit with probability 1/2)."""
    ids = sorted(a)
    statistic = Statistic.of_stats(MeanOf(), [a[u] for u in ids] + [b[u] for u in ids], "mean")
    n = len(ids)
    keep = np.concatenate([np.ones(n), np.zeros(n)])
    observed = statistic(np.stack([keep, 1 - keep]))
    difference = float(observed[0] - observed[1])
    if abs(difference) <= 1e-12:
        return 1.0
    swapped = np.random.default_rng(seed).random((trials, n)) < 0.5
    as_a = np.hstack([1 - swapped, swapped]).astype(np.float64)
    trial = statistic(as_a) - statistic(1 - as_a)
    return (1 + int(np.count_nonzero(np.abs(trial) >= abs(difference) - 1e-12))) / (1 + trials)


def tiny(trials: int) -> list[str]:
    rows = []
    scorer = MeanOf()
    for n in (2, 3, 4, 5, 6):
        rng = np.random.default_rng([2, n])
        hits, reported_before, reported_after = 0, 0, 0
        for trial in range(trials):
            x, y = population(rng, n), population(rng, n)
            _, after = interval_pair(mean_units(x.tolist()), scorer, trial)
            hits += covered(after.low, after.high, TRUTH)  # type: ignore[attr-defined]
            reported_before += randomization_p(mean_units(x.tolist()), mean_units(y.tolist()), 1000, trial) <= 0.05
            test = paired_test(
                scorer, mean_units(x.tolist()), mean_units(y.tolist()), "mean", trials=REPLICATES, seed=trial
            )
            reported_after += bool(test and test.p_value is not None and test.p_value <= 0.05)
        rows.append(f"| tiny phase, {n} documents | interval coverage | {hits / trials:.1%} | (unchanged) |")
        rows.append(
            f"| tiny phase, {n} documents | equal systems called different | "
            f"{reported_before / trials:.1%} | {reported_after / trials:.1%} |"
        )
    return rows


def selection(trials: int) -> list[str]:
    rows = []
    scorer = MeanOf()
    n = 30
    for k in (5, 20):
        rng = np.random.default_rng([3, k])
        hits, false = [0, 0], [0, 0]
        for trial in range(trials):
            difficulty = rng.normal(0.6, 0.15, n)
            runs = [difficulty + rng.normal(0, 0.1, n) for _ in range(k)]
            best = max(runs, key=lambda run: float(run.mean()))
            other = difficulty + rng.normal(0, 0.1, n)
            before, _ = interval_pair(mean_units(best.tolist()), scorer, trial)
            after = for_selection(before, k)  # type: ignore[arg-type]
            for i, interval in enumerate((before, after)):
                hits[i] += covered(interval.low, interval.high, 0.6)  # type: ignore[attr-defined]
            test = paired_test(
                scorer, mean_units(best.tolist()), mean_units(other.tolist()), "mean", trials=REPLICATES, seed=trial
            )
            if test is not None and test.p_value is not None and test.difference > 0:
                false[0] += test.p_value <= 0.05
                false[1] += min(1.0, test.p_value * k) <= 0.05
        rows.append(f"| best of {k} runs, 30 documents | interval coverage | {_pct(hits, trials)} |")
        rows.append(f"| best of {k} runs, 30 documents | no better, called better | {_pct(false, trials)} |")
    return rows


def _randomization_f1(a: Units, b: Units, seed: int) -> float:
    """``randomization_p`` for micro F1 (the same swaps through the scorer's aggregation)."""
    ids = sorted(a)
    statistic = Statistic.of_stats(MicroF1(), [a[u] for u in ids] + [b[u] for u in ids], "f1")
    n = len(ids)
    keep = np.concatenate([np.ones(n), np.zeros(n)])
    observed = statistic(np.stack([keep, 1 - keep]))
    difference = float(observed[0] - observed[1])
    swapped = np.random.default_rng(seed).random((1000, n)) < 0.5
    as_a = np.hstack([1 - swapped, swapped]).astype(np.float64)
    trial = statistic(as_a) - statistic(1 - as_a)
    return (1 + int(np.count_nonzero(np.abs(trial) >= abs(difference) - 1e-12))) / 1001


def unequal_noise(trials: int) -> list[str]:
    """Equal means, unequal noise: micro F1 of a precise system (predicts half the mentions, 90% right) against
    a greedy one (predicts twice as many, finds 90%), both F1 0.6; and per-document scores, one system steady,
    the other with right-skewed noise of the same mean."""
    rows = []
    for n in (10, 30):
        rng = np.random.default_rng([4, n])
        rejected, skewed = [0, 0], [0, 0]
        for trial in range(trials):
            gold = 1 + rng.poisson(8, n)
            predicted_a = np.maximum(1, rng.binomial(gold, 0.5))
            predicted_b = rng.poisson(2 * gold)
            a = count_units(np.stack([rng.binomial(predicted_a, 0.9), predicted_a, gold], axis=1))
            b = count_units(np.stack([np.minimum(rng.binomial(gold, 0.9), predicted_b), predicted_b, gold], axis=1))
            rejected[0] += _randomization_f1(a, b, trial) <= 0.05
            test = paired_test(MicroF1(), a, b, "f1", trials=REPLICATES, seed=trial)
            rejected[1] += bool(test and test.p_value is not None and test.p_value <= 0.05)
            level = rng.random(n) * 0.6 + 0.2
            steady = mean_units((level + rng.normal(0, 0.01, n)).tolist())
            noisy = mean_units((level + rng.exponential(0.1, n) - 0.1).tolist())
            skewed[0] += randomization_p(steady, noisy, 1000, trial) <= 0.05
            test = paired_test(MeanOf(), steady, noisy, "mean", trials=REPLICATES, seed=trial)
            skewed[1] += bool(test and test.p_value is not None and test.p_value <= 0.05)
        rows.append(
            f"| equal micro F1, unequal precision and recall, N = {n} | false rejections | {_pct(rejected, trials)} |"
        )
        rows.append(f"| equal means, skewed noise on one system, N = {n} | false rejections | {_pct(skewed, trials)} |")
    return rows


def _pct(counts: list[int], trials: int) -> str:
    return f"{counts[0] / trials:.1%} | {counts[1] / trials:.1%}"


SCENARIOS: dict[str, Callable[[int], list[str]]] = {
    "small": small_strata,
    "tiny": tiny,
    "selection": selection,
    "noise": unequal_noise,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=400, help="simulated phases per row")
    parser.add_argument("--only", choices=sorted(SCENARIOS), action="append")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    lines = [
        "| scenario | measured | before | after |",
        "|---|---|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    for name in args.only or list(SCENARIOS):
        for row in SCENARIOS[name](args.trials):
            lines.append(row)
            print(row, flush=True)
    if args.write_results:
        body = "\n".join(
            [
                f"Measured on {datetime.now(UTC):%Y-%m-%d}, Python {platform.python_version()}, "
                f"numpy {np.__version__}, nproc {os.cpu_count()}; {args.trials} simulated phases per row, "
                f"{REPLICATES:,} replicates each "
                "(Monte Carlo standard error of a share near 95%: about 1.1 points at 400 phases). Nominal: 95% "
                "coverage, 5% false rejections.",
                "",
                "```sh",
                ".venv/bin/python bench/coverage_bench.py " + " ".join(sys.argv[1:]),
                "```",
                "",
                *lines,
            ]
        )
        RESULTS.write_text(replace_section(RESULTS.read_text(), HEADING, body))


if __name__ == "__main__":
    main()
