"""The regression metrics of a small sample computed without numpy are numpy's floats, bit for bit."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scorers.families import regression, regression_plain
from scorers.families.regression_plain import PLAIN_BOUND, PLAIN_MAX, applies, pairwise_sum
from tests.scorers.families.test_correlation import side as correlation_side


def exact(values: dict[str, float]) -> dict[str, str]:
    """Each float as its hex: a different last bit or the sign of a zero shows."""
    return {name: float(value).hex() for name, value in values.items()}


#: Values that tie often (0.1 + 0.2 is not 0.3: two values one ulp apart), zeros of both signs.
FEW = (-2.0, -0.5, 0.0, -0.0, 0.1, 0.2, 0.30000000000000004, 0.3, 1.0, 3.5)
SCALES = (1.0, 1e-300, 1e-150, 1e-5, 1e6, 2e149)  # times FEW, within PLAIN_BOUND


def side(n: int) -> st.SearchStrategy[list[float]]:
    """``n`` values within the plain bound: many ties, any floats, or a few ulps around one value."""
    return correlation_side(n, SCALES, FEW)


#: Lengths around the pairwise summation's runs of 8 and blocks of 128, and any other up to 300.
sizes = st.one_of(
    st.sampled_from([1, 2, 3, 7, 8, 9, 15, 16, 17, 127, 128, 129, 136, 255, 256, 257]), st.integers(1, 300)
)
pairs = sizes.flatmap(lambda n: st.tuples(side(n), side(n)))


@settings(max_examples=400, deadline=None)
@given(pairs)
@example(([1.0, 2.0], [-0.4, 0.3]))  # two pairs: r rounded to exactly 1
@example(([0.0, -0.0, 1.0], [-0.0, 0.0, 2.0]))
def test_the_plain_metrics_are_numpys_bit_for_bit(data: tuple[list[float], list[float]]) -> None:
    gold, predicted = data
    assert applies(gold, predicted)
    assert exact(regression_plain.scores(gold, predicted)) == exact(regression.numpy_scores(gold, predicted))
    assert exact(regression.scores(gold, predicted)) == exact(regression.numpy_scores(gold, predicted))


def test_the_largest_plain_sample_is_numpys_too() -> None:
    rng = random.Random(20261205)
    for n in (PLAIN_MAX - 1, PLAIN_MAX):
        gold = [round(rng.uniform(0, 5), 1) for _ in range(n)]
        predicted = [g + rng.gauss(0, 1) for g in gold]
        assert exact(regression_plain.scores(gold, predicted)) == exact(regression.numpy_scores(gold, predicted))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=-1e300, max_value=1e300), max_size=3000))
def test_pairwise_sum_is_numpys_sum(values: list[float]) -> None:
    assert pairwise_sum(values).hex() == float(np.add.reduce(np.asarray(values, dtype=np.float64))).hex()


def test_pairwise_sum_of_long_runs_is_numpys_sum() -> None:
    rng = random.Random(7)
    for n in (1023, 1024, 1025, 4096 + 3, 20_000):
        values = [rng.uniform(-1, 1) * 10 ** rng.randint(-8, 8) for _ in range(n)]
        assert pairwise_sum(values) == float(np.add.reduce(np.asarray(values)))
        assert pairwise_sum(values, 5, n - 9) == float(np.add.reduce(np.asarray(values[5 : n - 4])))


@pytest.mark.parametrize(
    ("gold", "predicted", "plain"),
    [
        ([1.0, 2.0], [PLAIN_BOUND, -PLAIN_BOUND], True),
        ([1.0, 2.0], [PLAIN_BOUND * 1.0000001, 0.0], False),  # past the bound: numpy's overflow rules
        ([1.0, math.nan], [1.0, 2.0], False),
        ([1.0, 2.0], [math.inf, 2.0], False),
        ([0.5] * PLAIN_MAX, [0.5] * PLAIN_MAX, True),
        ([0.5] * (PLAIN_MAX + 1), [0.5] * (PLAIN_MAX + 1), False),  # a large sample: numpy is faster
    ],
)
def test_what_the_plain_way_takes(gold: list[float], predicted: list[float], plain: bool) -> None:
    assert applies(gold, predicted) is plain


def test_values_past_the_bound_are_scored_by_numpy_as_before() -> None:
    gold, predicted = [1e300, -1e300, 3.0], [1e300, 2.0, -1e300]
    with np.errstate(all="ignore"):
        assert json.dumps(regression.scores(gold, predicted)) == json.dumps(regression.numpy_scores(gold, predicted))
