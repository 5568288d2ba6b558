"""The uncertainty benchmark's units have each scorer's stored shape: its aggregate and its vectorized hook read
them, agree on them, and a better system scores higher."""

from __future__ import annotations

import numpy as np
import pytest

from bench.uncertainty_bench import SCORERS, Fallback, make_units
from leaderboard.bootstrap import bootstrap_interval
from scorers import get_scorer


@pytest.mark.parametrize("name", SCORERS)
def test_units_aggregate_through_the_real_scorer_and_its_hook(name: str) -> None:
    scorer = get_scorer(name)
    units = make_units(name, 40, 0.6, 1)
    stats = [units[k] for k in sorted(units)]
    for spec in scorer.metrics:
        metric = scorer.weighted_metric(stats, spec.name)
        assert metric is not None
        assert metric(np.ones((1, len(stats))))[0] == pytest.approx(scorer.aggregate(stats)[spec.name], abs=1e-12)
    better = scorer.aggregate(list(make_units(name, 40, 0.9, 1).values()))[scorer.primary_metric]
    assert better > scorer.aggregate(stats)[scorer.primary_metric]


def test_the_fallback_has_no_hook_and_gives_the_same_percentile_interval() -> None:
    scorer = get_scorer("svident-detection")
    units = make_units("svident-detection", 30, 0.6, 2)
    slow = bootstrap_interval(Fallback(scorer), units, "f1", replicates=200, method="percentile")
    fast = bootstrap_interval(scorer, units, "f1", replicates=200, method="percentile")
    assert Fallback(scorer).weighted_metric([], "f1") is None
    assert (slow.low, slow.high, slow.strata) == (pytest.approx(fast.low), pytest.approx(fast.high), 2)
