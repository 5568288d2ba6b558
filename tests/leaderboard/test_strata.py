"""Small strata: a stratum of one or three units among thirty gets its share of the variance from the pooled
spread of the others, the interval is widened by the factor worked out by hand, what stays unreliable is
flagged, and by simulation the coverage rises from about a quarter to about 90% (``bench/coverage_bench.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from leaderboard.bootstrap import bootstrap_interval, interval_of
from leaderboard.resampling import Statistic, bootstrap_counts, jackknife
from leaderboard.strata import MIN_STRATUM, pooling
from tests.leaderboard.systems import MeanOf, mean_units

BY_LANGUAGE = MeanOf(by_language=True)


def _units(rng: np.random.Generator, sizes: tuple[int, ...]) -> dict[str, dict[str, object]]:
    langs = [lang for lang, size in zip("abcd", sizes, strict=False) for _ in range(size)]
    u = rng.random(len(langs))
    values = np.where(u < 0.3, 1.0, np.where(u < 0.4, 0.0, rng.beta(5, 3, len(langs))))
    return mean_units(values, langs)


def test_the_widening_factor_by_hand() -> None:
    # Nine units in one language, one in the other, averaged per language then over both: the large stratum's
    # jackknife share V is s^2 / 9 / 4, so the pooled spread is 9 V; the singleton's share is taken as 9 V / 1;
    # the bootstrap sees (8 / 9) V. The factor is sqrt((V + 9 V) / (8 V / 9)) = sqrt(11.25), df = 8.
    units = mean_units([0.1, 0.4, 0.2, 0.9, 0.5, 0.7, 0.3, 0.8, 0.6, 0.5], ["a"] * 9 + ["b"])
    statistic = Statistic.of(BY_LANGUAGE, units, "mean")
    pool = pooling(jackknife(statistic), statistic.strata)
    assert pool.applies and pool.small == 1 and pool.df == 8
    assert pool.factor == pytest.approx(math.sqrt(11.25))
    assert pool.unreliable  # a single unit: widened, and still flagged


def test_small_strata_are_widened_and_flagged() -> None:
    rng = np.random.default_rng(3)
    units = _units(rng, (27, 3))
    statistic = Statistic.of(BY_LANGUAGE, units, "mean")
    values = statistic(bootstrap_counts(statistic.strata, 4000, 1))
    before = interval_of(statistic, values, level=0.95, method="bca-expanded", pool_small=False)
    after = interval_of(statistic, values, level=0.95, method="bca-expanded")
    assert after.low < before.low and before.high < after.high  # type: ignore[operator]
    assert after.pooled and after.small_strata == 1 and after.notes == ("small_strata",) and after.reliable
    assert "widened for small strata" in after.label
    lone = bootstrap_interval(BY_LANGUAGE, _units(rng, (29, 1)), "mean")
    assert lone.pooled and "small_strata_unreliable" in lone.notes and not lone.reliable
    # Nothing to pool from: every stratum small. Not widened, flagged.
    tiny = bootstrap_interval(BY_LANGUAGE, _units(rng, (3, 4, 2)), "mean")
    assert not tiny.pooled and tiny.small_strata == 3 and not tiny.reliable


def test_strata_large_enough_keep_the_method_as_it_was() -> None:
    units = _units(np.random.default_rng(4), (20, MIN_STRATUM))
    statistic = Statistic.of(BY_LANGUAGE, units, "mean")
    values = statistic(bootstrap_counts(statistic.strata, 2000, 1))
    same = interval_of(statistic, values, level=0.95, method="bca-expanded", pool_small=False)
    assert interval_of(statistic, values, level=0.95, method="bca-expanded") == same


@pytest.mark.parametrize(("sizes", "before_at_most", "after_at_least"), [((29, 1), 0.40, 0.85), ((27, 3), 0.92, 0.93)])
def test_coverage_with_a_small_stratum_rises_to_near_the_level(
    sizes: tuple[int, int], before_at_most: float, after_at_least: float
) -> None:
    truth, trials = 0.3 + 0.6 * 5 / 8, 200
    rng = np.random.default_rng([11, *sizes])
    hits = [0, 0]
    for trial in range(trials):
        statistic = Statistic.of(BY_LANGUAGE, _units(rng, sizes), "mean")
        values = statistic(bootstrap_counts(statistic.strata, 1000, trial))
        for i, pool in enumerate((False, True)):
            interval = interval_of(statistic, values, level=0.95, method="bca-expanded", pool_small=pool)
            hits[i] += interval.low <= truth <= interval.high  # type: ignore[operator]
    assert hits[0] / trials <= before_at_most and hits[1] / trials >= after_at_least, hits


def test_a_paired_test_with_a_small_stratum_widens_like_the_interval() -> None:
    # One language of 29 documents and one of 1: the singleton's difference counts half the score, and a test
    # that ignored its spread would call far more pairs different than the level allows.
    from leaderboard.significance import paired_test

    rng = np.random.default_rng(8)
    langs = ["a"] * 29 + ["b"]
    calls, trials = 0, 150
    for trial in range(trials):
        base = rng.random(30)
        a = mean_units((base + rng.normal(0, 0.2, 30)).tolist(), langs)
        b = mean_units((base + rng.normal(0, 0.2, 30)).tolist(), langs)
        test = paired_test(BY_LANGUAGE, a, b, "mean", trials=500, seed=trial)
        assert test is not None and test.p_value is not None
        calls += test.p_value <= 0.05
    assert calls / trials <= 0.09
    fast = paired_test(BY_LANGUAGE, a, b, "mean", trials=300)
    slow = paired_test(MeanOf(by_language=True, vectorized=False), a, b, "mean", trials=300)
    assert fast is not None and slow is not None and fast.p_value == pytest.approx(slow.p_value)
