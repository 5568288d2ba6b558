"""Pearson's r, Spearman's rho and Kendall's tau-b computed without SciPy are SciPy's numbers (Spearman's and Kendall's
to the last bit, Pearson's within ``n`` units of 2**-52), and the same whatever BLAS's threads."""

from __future__ import annotations

import json
import math
import textwrap
import warnings
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from scorers.families import correlation
from scorers.families.regression import scores
from tests.scorers.families.blas_threads import needs_two_cores, outputs_by_blas_threads

NAMES = ("pearson", "spearman", "kendall")


def scipys(x: list[float], y: list[float]) -> dict[str, float]:
    """SciPy's three statistics, set to 0 where the regression metrics set them to 0 (undefined, not finite)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # constant and nearly constant input, overflow
        values = {
            "pearson": stats.pearsonr(x, y).statistic,
            "spearman": stats.spearmanr(x, y).statistic,
            "kendall": stats.kendalltau(x, y).statistic,
        }
    return {name: float(v) if math.isfinite(v) else 0.0 for name, v in values.items()}


def ours(x: list[float], y: list[float]) -> dict[str, float]:
    with np.errstate(all="ignore"):
        a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        values = {
            "pearson": correlation.pearson(a, b),
            "spearman": correlation.spearman(a, b),
            "kendall": correlation.kendall(a, b),
        }
    return {name: v if math.isfinite(v) else 0.0 for name, v in values.items()}


def through_scores(x: list[float], y: list[float]) -> dict[str, float]:
    with np.errstate(all="ignore"):  # the errors of values past the scorer's bound (1e150) overflow
        metrics = scores(x, y)
    return {name: metrics[name] for name in NAMES}


def assert_scipys(found: dict[str, float], expected: dict[str, float], pairs: int) -> None:
    """Spearman's and Kendall's the same floats; Pearson's within what two orders of summing ``pairs`` products of
    unit vectors may differ by (SciPy sums them with BLAS, whose order depends on the machine)."""
    assert {k: v for k, v in found.items() if k != "pearson"} == {k: v for k, v in expected.items() if k != "pearson"}
    assert abs(found["pearson"] - expected["pearson"]) <= pairs * 2.0**-52, (found, expected)


#: Values that tie often (0.1 + 0.2 is not 0.3: two values one ulp apart).
FEW = (-2.0, -0.5, 0.0, 0.1, 0.2, 0.30000000000000004, 0.3, 1.0, 3.5)
SCALES = (1.0, 1e-300, 1e-150, 1e6, 1e150, 1e300)


def side(n: int, scales: Sequence[float] = SCALES, few: Sequence[float] = FEW) -> st.SearchStrategy[list[float]]:
    """``n`` values: many ties (of ``few``), or any floats, at one of ``scales``; or a nearly constant side."""
    ties = st.sampled_from(scales).flatmap(
        lambda s: st.lists(st.sampled_from([v * s for v in few]), min_size=n, max_size=n)
    )
    spread = st.sampled_from(scales).flatmap(
        lambda s: st.lists(st.floats(min_value=-s, max_value=s), min_size=n, max_size=n)
    )
    # A few ulps apart around one value: SciPy warns that precision may be lost, and still answers.
    near = st.sampled_from([1.0, -3.0, 1e-300, 7e149]).flatmap(
        lambda base: st.lists(st.integers(0, 3).map(lambda k: base * (1 + k * 2.0**-52)), min_size=n, max_size=n)
    )
    return st.one_of(ties, spread, near)


pairs = st.integers(min_value=2, max_value=300).flatmap(lambda n: st.tuples(side(n), side(n)))


@settings(max_examples=300, deadline=None)
@given(pairs)
def test_the_three_correlations_are_scipys(data: tuple[list[float], list[float]]) -> None:
    x, y = data
    if len(set(x)) > 1 and len(set(y)) > 1:  # constant sides never reach these functions
        assert_scipys(ours(x, y), scipys(x, y), len(x))
    # And through the regression metrics, where constant sides are 0 as SciPy's NaN is.
    assert_scipys(through_scores(x, y), scipys(x, y), len(x))


@pytest.mark.parametrize(
    ("x", "y"),
    [
        ([1.0, math.inf, 3.0, 2.0], [4.0, 1.0, 1.0, 2.0]),  # an infinity: ranks still say something
        ([1.0, -math.inf, math.inf, 2.0], [4.0, 1.0, 5.0, 2.0]),
        ([1.0, math.nan, 3.0], [4.0, 1.0, 2.0]),  # NaN: SciPy says NaN, the metrics 0
        ([1.0, 2.0], [3.0, 1.0]),  # two pairs: SciPy rounds r to exactly -1 or 1
        ([1e308, 1e308, -1e308, 0.0], [1e308, 9e307, -1e308, 1.0]),  # overflow in the mean: r is NaN
    ],
)
def test_values_the_scorer_refuses_still_give_scipys_numbers(x: list[float], y: list[float]) -> None:
    assert_scipys(ours(x, y), scipys(x, y), len(x))
    assert_scipys(through_scores(x, y), scipys(x, y), len(x))


def test_kendalls_discordant_pairs_of_a_large_sample_with_ties_are_scipys() -> None:
    # 50,000 pairs, most values repeated: the merge levels of the inversion count, well past any small case.
    rng = np.random.default_rng(20261204)
    x = rng.integers(0, 400, 50_000).astype(np.float64)
    y = np.round(x / 7 + rng.normal(0, 9, 50_000))
    expected = stats.kendalltau(x, y).statistic
    assert correlation.kendall(x, y) == expected
    assert correlation.kendall(x, -y) == stats.kendalltau(x, -y).statistic
    assert correlation.spearman(x, y) == stats.spearmanr(x, y).statistic
    assert abs(correlation.pearson(x, y) - stats.pearsonr(x, y).statistic) <= 50_000 * 2.0**-52


#: Pearson's r and Spearman's rho of 200,000 pairs in a process whose BLAS has the threads ``OPENBLAS_NUM_THREADS``
#: says (read as the library loads), as the hex of each float.
THREADED = textwrap.dedent(
    """
    import json
    import numpy as np
    from scorers.families import correlation
    rng = np.random.default_rng(20261205)
    x = rng.standard_normal(200_000)
    y = 0.3 * x + rng.standard_normal(200_000)
    print(json.dumps([correlation.pearson(x, y).hex(), correlation.spearman(np.round(x, 2), np.round(y, 2)).hex()]))
    """
)


@needs_two_cores
def test_the_correlations_are_the_same_whatever_blas_threads_compute_them() -> None:
    """BLAS's dot product splits a long vector among its threads, one per core: SciPy's Pearson's r of these pairs
    differs in its last bit between one thread and two. A score must not depend on the worker's cores."""
    found = {threads: json.loads(text) for threads, text in outputs_by_blas_threads(THREADED).items()}
    assert found["1"] == found["2"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=12), max_size=90))
def test_inversions_are_the_pairs_out_of_order(values: list[int]) -> None:
    out_of_order = sum(1 for a, b in combinations(values, 2) if a > b)
    assert correlation.inversions(np.asarray(values, dtype=np.intp)) == out_of_order


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=-1e6, max_value=1e6).map(lambda v: round(v, 1) if v > 0 else v), max_size=80))
def test_average_ranks_are_scipys(values: list[float]) -> None:
    x = np.asarray(values, dtype=np.float64)
    ranks = correlation.average_ranks(x)
    assert ranks.dtype == np.float64
    assert ranks.tolist() == stats.rankdata(x).tolist()
