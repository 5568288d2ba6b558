"""Bootstrap intervals: deterministic, resampling units with replacement through the scorer's aggregate."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from leaderboard.bootstrap import bootstrap_interval, bootstrap_values
from scorers.base import UnitStats
from tests.leaderboard.builders import MeanScorer

AGGREGATE = MeanScorer().aggregate
# Ten documents with x = 0.0, 0.1, ..., 0.9: the mean is 0.45.
UNITS = {f"doc{i}": {"x": i / 10} for i in range(10)}


def test_same_seed_same_interval_and_unit_order_does_not_matter() -> None:
    first = bootstrap_interval(AGGREGATE, UNITS, "mean", samples=300, seed=7)
    reversed_units = dict(reversed(list(UNITS.items())))
    assert bootstrap_interval(AGGREGATE, reversed_units, "mean", samples=300, seed=7) == first
    assert bootstrap_interval(AGGREGATE, UNITS, "mean", samples=300, seed=8) != first


def test_the_interval_of_a_mean_contains_the_point_estimate() -> None:
    low, high = bootstrap_interval(AGGREGATE, UNITS, "mean", samples=500)
    assert 0.0 <= low < 0.45 < high <= 0.9
    # The standard error of the mean is about 0.29 / sqrt(10) = 0.09, so a 95% interval spans
    # roughly +-0.18; it is neither degenerate nor the whole range.
    assert 0.2 < high - low < 0.5


def test_a_wider_confidence_gives_a_wider_interval() -> None:
    low90, high90 = bootstrap_interval(AGGREGATE, UNITS, "mean", samples=500, confidence=0.9)
    low99, high99 = bootstrap_interval(AGGREGATE, UNITS, "mean", samples=500, confidence=0.99)
    assert low99 <= low90 and high90 <= high99


def test_identical_units_give_a_point_interval() -> None:
    units = {f"d{i}": {"x": 0.25} for i in range(5)}
    assert bootstrap_interval(AGGREGATE, units, "mean", samples=50) == (0.25, 0.25)


def test_values_are_each_resample_metric_for_a_lower_is_better_metric_too() -> None:
    values = bootstrap_values(AGGREGATE, UNITS, "error", samples=20)
    assert len(values) == 20
    assert all(0.1 - 1e-12 <= v <= 1.0 + 1e-12 for v in values)  # 1 - mean, mean in [0, 0.9]


def _languages(stats: Sequence[UnitStats]) -> dict[str, float]:
    return {"languages": float(len({s["lang"] for s in stats}))}


def test_strata_keep_every_language_in_every_resample() -> None:
    units = {f"{lang}/{i}": {"lang": lang} for lang in ("de", "en") for i in range(3)}
    by_language = bootstrap_values(_languages, units, "languages", samples=200, strata=lambda u: u.split("/")[0])
    assert set(by_language) == {2.0}
    # Without strata some resamples draw all six units from one language (chance 2 * 0.5**6 each).
    assert set(bootstrap_values(_languages, units, "languages", samples=200)) == {1.0, 2.0}


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="without units"):
        bootstrap_interval(AGGREGATE, {}, "mean")
    with pytest.raises(ValueError, match="samples must be a positive integer, not 0"):
        bootstrap_interval(AGGREGATE, UNITS, "mean", samples=0)
    with pytest.raises(ValueError, match="confidence must be a number strictly between 0 and 1, not 1"):
        bootstrap_interval(AGGREGATE, UNITS, "mean", confidence=1)
    with pytest.raises(KeyError, match="no metric 'f1' \\(it has: error, mean\\)"):
        bootstrap_interval(AGGREGATE, UNITS, "f1")


def test_a_non_finite_resample_value_is_refused() -> None:
    def nan_metric(stats: Sequence[UnitStats]) -> dict[str, float]:
        return {"m": math.nan}

    with pytest.raises(ValueError, match="metric 'm' is nan on a resample"):
        bootstrap_interval(nan_metric, UNITS, "m", samples=3)
