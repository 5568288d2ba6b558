"""Bootstrap intervals: reproducible, stratified, honest about undefined replicates, few units and zero width,
and in agreement with scipy.stats.bootstrap where both compute the same thing."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as scipy_stats

from leaderboard.bootstrap import (
    FEW_UNITS,
    METHODS,
    Interval,
    bootstrap_interval,
    endpoint_decimals,
    expanded_quantile,
    for_selection,
    student_quantile,
)
from leaderboard.resampling import Statistic, bootstrap_counts, seed_for
from tests.leaderboard.systems import MeanOf, MicroF1, count_units, mean_units

# Ten documents with x = 0.0, 0.1, ..., 0.9: the mean is 0.45.
UNITS = mean_units([i / 10 for i in range(10)])
MEAN = MeanOf()


def test_same_seed_same_interval_whatever_the_unit_order_and_another_seed_differs() -> None:
    first = bootstrap_interval(MEAN, UNITS, "mean", seed=7)
    assert bootstrap_interval(MEAN, dict(reversed(list(UNITS.items()))), "mean", seed=7) == first
    assert bootstrap_interval(MEAN, UNITS, "mean", seed=8) != first


def test_the_phase_seed_and_the_interval_are_the_same_in_another_process() -> None:
    # A phase's seed comes from its names through SHA-256, never from Python's per-process hash.
    assert seed_for("svident", "detection", "test") == 8662239472444390686
    code = (
        "import json; from leaderboard.bootstrap import bootstrap_interval; from leaderboard.resampling import "
        "seed_for; from tests.leaderboard.systems import MeanOf, mean_units; "
        "u = mean_units([i / 10 for i in range(10)]); "
        "print(json.dumps(bootstrap_interval(MeanOf(), u, 'mean', seed=seed_for('c', 't', 'p')).to_dict()))"
    )
    env_seed = {"PYTHONHASHSEED": "123"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env_seed)
    here = bootstrap_interval(MEAN, UNITS, "mean", seed=seed_for("c", "t", "p"))
    assert json.loads(out.stdout) == here.to_dict()


def test_the_interval_of_a_mean_holds_the_estimate_and_a_wider_level_is_wider() -> None:
    interval = bootstrap_interval(MEAN, UNITS, "mean")
    assert interval.estimate == pytest.approx(0.45)
    assert interval.low is not None and interval.high is not None
    assert 0.0 <= interval.low < 0.45 < interval.high <= 0.9
    # The standard error of the mean is about 0.29 / sqrt(10) = 0.09: roughly +-0.2 at 95%.
    assert 0.3 < interval.high - interval.low < 0.6
    narrow = bootstrap_interval(MEAN, UNITS, "mean", level=0.8)
    assert interval.low < narrow.low and narrow.high < interval.high  # type: ignore[operator]
    assert (interval.level, interval.method, interval.units, interval.strata) == (0.95, "bca-expanded", 10, 1)
    assert interval.notes == ("few_units",)


def test_vectorized_and_generic_paths_give_the_same_interval() -> None:
    rng = np.random.default_rng(5)
    units = count_units(np.column_stack([rng.integers(0, 4, 25), rng.integers(4, 8, 25), rng.integers(4, 8, 25)]))
    fast = bootstrap_interval(MicroF1(), units, "f1", replicates=300)
    slow = bootstrap_interval(MicroF1(vectorized=False), units, "f1", replicates=300)
    assert fast.low == pytest.approx(slow.low, abs=1e-12)
    assert fast.high == pytest.approx(slow.high, abs=1e-12)
    assert (fast.units, fast.replicates, fast.undefined) == (slow.units, slow.replicates, slow.undefined)


def test_strata_keep_every_language_in_every_replicate() -> None:
    # SV-Ident averages per language, then over languages. en has two groups (1.0 and 0.0), de one (0.5).
    units = mean_units([1.0, 0.0, 0.5], ["en", "en", "de"])
    stratified = MeanOf(by_language=True)
    statistic = Statistic.of(stratified, units, "mean")
    values = statistic(bootstrap_counts(statistic.strata, 400, 3))
    # de is in every replicate, so a replicate is (mean of two en draws + 0.5) / 2.
    assert set(np.round(values, 12)) == {0.25, 0.5, 0.75}

    class Unstratified(MeanOf):
        def stratum(self, unit: dict[str, object]) -> str | None:  # type: ignore[override]
            return None

    loose = Statistic.of(Unstratified(by_language=True), units, "mean")
    values = loose(bootstrap_counts(loose.strata, 400, 3))
    # Without strata some replicates lose a language and measure something else: 0.0 (en's 0.0 alone), 1.0.
    assert {0.0, 1.0} <= set(np.round(values, 12))
    interval = bootstrap_interval(stratified, units, "mean")
    assert interval.strata == 2
    assert interval.low is not None and interval.low >= 0.25 and interval.high is not None and interval.high <= 0.75


def test_undefined_replicates_are_left_out_and_counted_not_scored_zero() -> None:
    # Two documents: one empty (nothing to find, nothing predicted), one perfect. F1 is 1.0; a replicate
    # drawing the empty one twice (a quarter of them) has no F1 at all, not F1 = 0.
    units = count_units([[0, 0, 0], [3, 3, 3]])
    interval = bootstrap_interval(MicroF1(), units, "f1", replicates=2000)
    assert (interval.estimate, interval.low, interval.high) == (1.0, 1.0, 1.0)
    assert 400 < interval.undefined < 600
    assert set(interval.notes) == {"few_units", "too_few_units", "zero_width", "undefined_replicates"}


def test_an_undefined_metric_has_no_interval() -> None:
    interval = bootstrap_interval(MicroF1(), count_units([[0, 0, 0]] * 5), "f1")
    assert (interval.estimate, interval.low, interval.high) == (None, None, None)
    assert interval.undefined == interval.replicates
    assert "undefined" in interval.notes
    assert Interval.from_dict(json.loads(json.dumps(interval.to_dict()))) == interval


@pytest.mark.parametrize(
    "values",
    [[0.7], [0.25] * 8, [1.0] * 30],
    ids=["one unit", "identical units", "perfect on every unit"],
)
def test_zero_width_intervals_are_flagged(values: list[float]) -> None:
    interval = bootstrap_interval(MEAN, mean_units(values), "mean")
    assert interval.low == interval.high == pytest.approx(values[0])
    assert interval.zero_width and "zero_width" in interval.notes
    assert interval.few_units == (len(values) < FEW_UNITS)


def test_few_units_are_flagged_below_twenty() -> None:
    rng = np.random.default_rng(1)
    assert bootstrap_interval(MEAN, mean_units(rng.random(FEW_UNITS - 1)), "mean").few_units
    many = bootstrap_interval(MEAN, mean_units(rng.random(FEW_UNITS)), "mean")
    assert not many.few_units and many.notes == ()


def test_the_interval_round_trips_through_plain_data() -> None:
    interval = bootstrap_interval(MEAN, UNITS, "mean")
    assert Interval.from_dict(json.loads(json.dumps(interval.to_dict()))) == interval


@pytest.mark.parametrize(("ours", "theirs"), [("percentile", "percentile"), ("bca", "BCa")])
def test_agrees_with_scipy_bootstrap(ours: str, theirs: str) -> None:
    # A skewed sample, where BCa and percentile intervals differ visibly; both libraries resample 20,000
    # times, so their endpoints differ by Monte Carlo error only (a few thousandths of the width).
    x = np.random.default_rng(2).lognormal(0.0, 0.8, 40)
    interval = bootstrap_interval(MEAN, mean_units(x), "mean", replicates=20_000, method=ours)
    reference = scipy_stats.bootstrap(
        (x,), np.mean, n_resamples=20_000, method=theirs, rng=np.random.default_rng(9)
    ).confidence_interval
    assert interval.low is not None and interval.high is not None
    width = reference.high - reference.low
    assert abs(interval.low - reference.low) < 0.03 * width
    assert abs(interval.high - reference.high) < 0.03 * width


def test_the_expansion_widens_small_samples_and_fades_as_they_grow() -> None:
    x = np.random.default_rng(4).random(8)
    bca = bootstrap_interval(MEAN, mean_units(x), "mean", method="bca")
    expanded = bootstrap_interval(MEAN, mean_units(x), "mean")
    assert expanded.low < bca.low and bca.high < expanded.high  # type: ignore[operator]
    # Hesterberg's factor: sqrt(n / (n - 1)) * t(n - 1) in place of 1.96.
    assert expanded_quantile(0.025, [6]) == pytest.approx(math.sqrt(6 / 5) * 2.5705818, abs=1e-6)
    assert expanded_quantile(0.025, [3000]) == pytest.approx(1.96, abs=2e-3)
    # Strata: the mean stratum size, and n minus the number of strata degrees of freedom.
    assert expanded_quantile(0.025, [3, 5]) == pytest.approx(math.sqrt(4 / 3) * 2.4469119, abs=1e-6)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="without units"):
        bootstrap_interval(MEAN, {}, "mean")
    with pytest.raises(ValueError, match="replicates must be a positive integer, not 0"):
        bootstrap_interval(MEAN, UNITS, "mean", replicates=0)
    with pytest.raises(ValueError, match="level must be a number strictly between 0 and 1, not 1"):
        bootstrap_interval(MEAN, UNITS, "mean", level=1)
    with pytest.raises(KeyError, match="no metric 'f1' \\(it has: mean\\)"):
        bootstrap_interval(MEAN, UNITS, "f1")
    with pytest.raises(ValueError, match="method must be one of " + ", ".join(METHODS)):
        bootstrap_interval(MEAN, UNITS, "mean", method="studentized")


def test_the_monte_carlo_error_of_the_endpoints_shrinks_with_replicates_and_sets_the_decimals() -> None:
    x = np.random.default_rng(6).beta(5, 3, 200)
    errors = {r: bootstrap_interval(MEAN, mean_units(x), "mean", replicates=r).mc_error for r in (1000, 16_000)}
    assert errors[1000] is not None and errors[16_000] is not None
    # An order-statistic estimate of the endpoints' spread over seeds: a quarter of it at 16 times the replicates.
    assert 2.5 < errors[1000] / errors[16_000] < 6.5
    spread = np.std([bootstrap_interval(MEAN, mean_units(x), "mean", seed=s).low for s in range(40)])  # type: ignore[arg-type]
    assert 0.5 < errors[1000] / spread < 2.0
    # Percent with two decimals needs an error under 0.005 points; 0.04 points allows one decimal, 0.4 none.
    assert [endpoint_decimals(e) for e in (0.00004, 0.0004, 0.004, None)] == [2, 1, 0, 2]
    assert endpoint_decimals(0.0004, scale=1.0, most=4) == 3


def test_a_selected_best_is_widened_to_the_bonferroni_level() -> None:
    interval = bootstrap_interval(MEAN, UNITS, "mean")
    assert for_selection(interval, 1) is interval
    wide = for_selection(interval, 5)
    factor = scipy_stats.norm.isf(0.005) / scipy_stats.norm.isf(0.025)
    assert wide.estimate == interval.estimate and wide.selected_from == 5
    assert wide.low == pytest.approx(0.45 - factor * (0.45 - interval.low))  # type: ignore[operator]
    assert wide.high == pytest.approx(0.45 + factor * (interval.high - 0.45))  # type: ignore[operator]
    assert "widened for the choice of the best of 5 submissions" in wide.label
    assert Interval.from_dict(json.loads(json.dumps(wide.to_dict()))) == wide


def test_students_quantile_is_scipys_and_an_interval_does_not_import_scipy_stats() -> None:
    # The same function scipy.stats.t.ppf calls, bit for bit, over the levels and sizes boards use.
    for q in [0.9, 0.95, 0.975, 0.995, *np.linspace(0.5, 0.9999, 50)]:
        for df in [*range(1, 200), 1000, 10**5, math.inf]:
            assert student_quantile(float(q), df) == float(scipy_stats.t.ppf(q, df))
    # A worker's first interval (the expansion for a small sample) no longer pays scipy.stats' import.
    code = (
        "import sys; from leaderboard.bootstrap import bootstrap_interval; "
        "from tests.leaderboard.systems import MeanOf, mean_units; "
        "i = bootstrap_interval(MeanOf(), mean_units([i / 10 for i in range(10)]), 'mean'); "
        "print(i.method, 'scipy.stats' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["bca-expanded", "False"]
