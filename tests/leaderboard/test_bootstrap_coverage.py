"""Coverage by simulation: how often a nominal 95% interval holds the true value, at the sizes phases have.

Two populations shaped like the boards' metrics: per-document scores averaged (SV-Ident's groups: many
perfect documents, some failed ones, the rest spread) and micro F1 over documents of an extraction task
(SciER, FAMuS). For each size, ``TRIALS`` samples are drawn from the population, each gets its interval,
and the share that holds the population's value is the coverage. With 800 trials its Monte Carlo standard
error is about 0.008.

Stated tolerance for the default method (expanded BCa): within 0.045 of 0.95 at 6 units, within 0.03 at 10
and 30 units. Plain percentile intervals fall short of that at 6 and 10 units (about 0.84-0.90), which is
why the default is not the percentile interval. Seeded, so the test gives the same numbers every run;
``bench/uncertainty_bench.py --coverage`` prints the table.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from leaderboard.bootstrap import bootstrap_interval, interval_of
from leaderboard.resampling import Statistic, bootstrap_counts
from tests.leaderboard.systems import MeanOf, MicroF1, count_units, documents, mean_units

TRIALS = 800
TOLERANCE = {6: 0.045, 10: 0.03, 30: 0.03}


def _scores(rng: np.random.Generator, n: int) -> dict[str, dict[str, object]]:
    u = rng.random(n)
    values = np.where(u < 0.3, 1.0, np.where(u < 0.4, 0.0, rng.beta(5, 3, n)))
    return mean_units(values)


def _documents(rng: np.random.Generator, n: int) -> dict[str, dict[str, object]]:
    return count_units(documents(rng, n))


def _micro_f1_truth() -> float:
    sums = documents(np.random.default_rng(0), 2_000_000).sum(axis=0)
    return float(2 * sums[0] / (sums[1] + sums[2]))


POPULATIONS: dict[str, tuple[object, str, Callable[..., dict[str, dict[str, object]]], Callable[[], float]]] = {
    "per-document mean": (MeanOf(), "mean", _scores, lambda: 0.3 + 0.6 * 5 / 8),
    "micro F1": (MicroF1(), "f1", _documents, _micro_f1_truth),
}


def coverage(population: str, n: int, trials: int = TRIALS, seed: int = 17) -> dict[str, float]:
    """Share of ``trials`` intervals holding the true value, per method (all from the same replicates)."""
    scorer, metric, draw, truth_of = POPULATIONS[population]
    truth = truth_of()
    rng = np.random.default_rng([seed, n])
    hits = {"bca-expanded": 0, "percentile": 0}
    for trial in range(trials):
        statistic = Statistic.of(scorer, draw(rng, n), metric)  # type: ignore[arg-type]
        values = statistic(bootstrap_counts(statistic.strata, 1000, trial))
        for method in hits:
            interval = interval_of(statistic, values, level=0.95, method=method)
            assert interval.low is not None and interval.high is not None
            hits[method] += interval.low <= truth <= interval.high
    return {method: count / trials for method, count in hits.items()}


@pytest.mark.slow
@pytest.mark.parametrize("population", list(POPULATIONS))
@pytest.mark.parametrize("n", sorted(TOLERANCE))
def test_expanded_bca_covers_about_95_percent(population: str, n: int) -> None:
    measured = coverage(population, n)
    assert abs(measured["bca-expanded"] - 0.95) <= TOLERANCE[n], measured
    if n <= 10:
        # The reason for the method: plain percentile intervals under-cover at these sizes.
        assert measured["bca-expanded"] > measured["percentile"] + 0.02, measured


def test_the_simulation_uses_the_library_path() -> None:
    # interval_of on precomputed replicates is what bootstrap_interval does with the same seed.
    units = _documents(np.random.default_rng(3), 10)
    statistic = Statistic.of(MicroF1(), units, "f1")
    values = statistic(bootstrap_counts(statistic.strata, 1000, 5))
    assert interval_of(statistic, values, level=0.95, method="bca-expanded") == bootstrap_interval(
        MicroF1(), units, "f1", seed=5
    )
