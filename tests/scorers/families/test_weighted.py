"""Weighted metrics: a row of unit counts gives what the plain aggregation gives on the repeated units."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from scorers.base import prf as plain_prf
from scorers.families import binary, weighted
from scorers.families.averaging import nested_mean
from tests.scorers.families.blas_threads import needs_two_cores, outputs_by_blas_threads


def test_micro_prf_on_counts_by_hand() -> None:
    # Units [correct, predicted, gold]: (1, 2, 3) and (2, 2, 2). Weights (2, 1): sums (4, 6, 8).
    correct, predicted, gold = [1, 2], [2, 2], [3, 2]
    weights = np.array([[2.0, 1.0], [1.0, 1.0]])
    assert weighted.prf("p", correct, predicted, gold)(weights) == pytest.approx([4 / 6, 3 / 4])
    assert weighted.prf("r", correct, predicted, gold)(weights) == pytest.approx([4 / 8, 3 / 5])
    assert weighted.prf("f1", correct, predicted, gold)(weights) == pytest.approx([8 / 14, 6 / 9])


def test_a_replicate_with_every_denominator_zero_is_undefined_not_zero() -> None:
    # Unit 0 is an empty document (nothing to find, nothing predicted); unit 1 is perfect.
    correct, predicted, gold = [0, 3], [0, 3], [0, 3]
    weights = np.array([[2.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    f1 = weighted.prf("f1", correct, predicted, gold)(weights)
    assert math.isnan(f1[0])
    assert list(f1[1:]) == [1.0, 1.0]
    # Recall is undefined without gold, but F1 is 0 (not undefined) when only the predictions are empty.
    assert math.isnan(weighted.prf("r", [0], [2], [0])(np.ones((1, 1)))[0])
    assert weighted.prf("f1", [0], [2], [0])(np.ones((1, 1)))[0] == 0.0


def test_unknown_part_is_named() -> None:
    with pytest.raises(KeyError, match="no micro metric part 'x'"):
        weighted.prf("x", [1], [1], [1])


RECORDS = [
    {"language": "en", "domain": "a", "f1": 1.0},
    {"language": "en", "domain": "a", "f1": 0.0},
    {"language": "en", "domain": "b", "f1": 0.0},
    {"language": "de", "domain": "a", "f1": 1.0},
]


def _keys(levels: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [tuple(str(r[level]) for level in levels) for r in RECORDS]


@pytest.mark.parametrize("levels", [(), ("language",), ("language", "domain")])
def test_nested_mean_of_ones_is_the_nested_mean(levels: tuple[str, ...]) -> None:
    metric = weighted.nested_mean(weighted.unit_column(RECORDS, "f1"), _keys(levels))
    expected = nested_mean(RECORDS, ["f1"], levels)["f1"]
    assert metric(np.ones((1, 4)))[0] == pytest.approx(expected, abs=1e-15)


def test_a_part_with_no_weight_is_absent_from_its_replicate() -> None:
    metric = weighted.nested_mean(weighted.unit_column(RECORDS, "f1"), _keys(("language",)))
    # de left out: only en's mean (1 + 0 + 0) / 3; everything left out: undefined.
    values = metric(np.array([[1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]))
    assert values[0] == pytest.approx(1 / 3)
    assert math.isnan(values[1])


def test_keys_must_have_every_level() -> None:
    with pytest.raises(ValueError, match="every level"):
        weighted.nested_mean([1.0, 2.0], [("en",), ()])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["en", "de", "fr"]), st.floats(0, 1), st.integers(0, 3)), min_size=1, max_size=12
    )
)
def test_weighted_nested_mean_equals_nested_mean_of_the_repeated_records(
    units: list[tuple[str, float, int]],
) -> None:
    records = [{"language": lang, "f1": value} for lang, value, _ in units]
    counts = [count for _, _, count in units]
    repeated = [r for r, c in zip(records, counts, strict=True) for _ in range(c)]
    metric = weighted.nested_mean([r["f1"] for r in records], [(r["language"],) for r in records])
    value = metric(np.array([counts], dtype=np.float64))[0]
    if not repeated:
        assert math.isnan(value)
    else:
        assert value == pytest.approx(nested_mean(repeated, ["f1"], ["language"])["f1"], abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 3)), min_size=1, max_size=12))
def test_weighted_binary_scores_equal_binary_scores_where_defined(units: list[tuple[int, int, int]]) -> None:
    stats = [binary.unit_stats(gold, predicted) for gold, predicted, _ in units]
    counts = np.array([[c for _, _, c in units]], dtype=np.float64)
    repeated = [s for s, (_, _, c) in zip(stats, units, strict=True) for _ in range(c)]
    plain = binary.binary_scores(repeated)
    tp = sum(1 for s in repeated if s["gold"] and s["predicted"])
    gold = sum(1 for s in repeated if s["gold"])
    predicted = sum(1 for s in repeated if s["predicted"])
    defined = {"accuracy": bool(repeated), "precision": predicted > 0, "recall": gold > 0, "f1": gold + predicted > 0}
    for metric in binary.METRICS:
        value = binary.weighted_metric(stats, metric)(counts)[0]
        if defined[metric]:
            assert value == pytest.approx(plain[metric], abs=1e-12), metric
        else:
            assert math.isnan(value) and plain[metric] == 0.0, metric
    if tp == 0 and gold + predicted:
        assert binary.weighted_metric(stats, "f1")(counts)[0] == 0.0


def test_micro_f1_equals_the_plain_prf_formula() -> None:
    rng = np.random.default_rng(3)
    correct = rng.integers(0, 5, 20)
    predicted = correct + rng.integers(0, 5, 20)
    gold = correct + rng.integers(0, 5, 20)
    weights = rng.integers(0, 3, (50, 20)).astype(np.float64)
    values = weighted.prf("f1", correct, predicted, gold)(weights)
    for row, value in zip(weights, values, strict=True):
        expected = plain_prf(row @ correct, row @ predicted, row @ gold)[2]
        assert value == pytest.approx(expected, abs=1e-12)


# -- weighted_sums: weights @ columns, the same floats on every machine ------------------------------------------
_VALUES = st.one_of(
    st.floats(-1e6, 1e6),
    st.integers(-1000, 1000).map(float),  # counts: a column of them is taken whole
    st.floats(-1e-300, 1e-300),
    st.sampled_from([0.0, -0.0, 1.0, 0.1, 1 / 3, 2.0**52 + 1, -(2.0**-1070), 5e-324]),
    st.builds(lambda m, e: m * 2.0**e, st.floats(-1, 1), st.integers(-60, 60)),
)


@st.composite
def _products(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    units = draw(st.integers(0, 12))
    k = draw(st.integers(1, 3))
    rows = draw(st.integers(1, 4))
    # Bootstrap-sized weights (two parts a column), or weights so large that a part holds fewer bits (three).
    most = draw(st.sampled_from([40, 2**22]))
    weights = np.asarray(draw(st.lists(st.integers(-3, most), min_size=rows * units, max_size=rows * units)))
    columns = np.asarray(draw(st.lists(_VALUES, min_size=units * k, max_size=units * k)), dtype=np.float64)
    return weights.reshape(rows, units), columns.reshape(units, k)


@settings(max_examples=400, deadline=None)
@given(_products(), st.booleans())
def test_weighted_sums_are_within_an_ulp_or_two_of_the_exact_sums(
    product: tuple[np.ndarray, np.ndarray], as_floats: bool
) -> None:
    """Each sum against the exact one (fractions): within two units in its last place, and a part of the largest
    value far smaller than any BLAS product's error (what the three parts leave out)."""
    from fractions import Fraction

    weights, columns = product
    largest = np.max(np.abs(columns), axis=0, initial=0.0)
    assume(np.all((largest == 0) | (largest > 1e-250)))  # a column of values near underflow: the pairwise sums
    sums = weighted.weighted_sums(weights.astype(np.float64) if as_floats else weights, columns)
    assert sums.shape == (weights.shape[0], columns.shape[1])
    for r, row in enumerate(weights):
        for j in range(columns.shape[1]):
            exact = sum((Fraction(int(w)) * Fraction(float(c)) for w, c in zip(row, columns[:, j], strict=True)),
                        Fraction(0))  # fmt: skip
            left_out = sum(abs(int(w)) for w in row) * float(np.max(np.abs(columns[:, j]), initial=0.0)) * 2.0**-58
            assert abs(Fraction(float(sums[r, j])) - exact) <= 2 * math.ulp(float(exact)) + Fraction(left_out)


def test_weighted_sums_of_other_weights_are_numpy_s_pairwise_sums() -> None:
    rng = np.random.default_rng(7)
    weights, columns = rng.random((5, 300)), rng.standard_normal((300, 2))
    expected = np.stack([np.add.reduce(weights * columns[:, j], axis=-1) for j in range(2)], axis=1)
    assert weighted.weighted_sums(weights, columns).tobytes() == expected.tobytes()
    columns[3, 1] = np.nan  # not finite: the pairwise sums too, NaN where the product is
    found = weighted.weighted_sums(np.ones((2, 300), dtype=np.int32), columns)
    assert not np.isnan(found[:, 0]).any() and np.isnan(found[:, 1]).all()


@pytest.mark.parametrize(("most", "scale"), [(2**31, 1.0), (20, 1e-305)], ids=["huge weights", "tiny values"])
def test_weighted_sums_that_cannot_be_cut_are_numpy_s_pairwise_sums(most: int, scale: float) -> None:
    rng = np.random.default_rng(8)
    weights, columns = rng.integers(0, most, size=(3, 50)), rng.standard_normal((50, 2)) * scale
    expected = np.stack([np.add.reduce(weights * columns[:, j], axis=-1) for j in range(2)], axis=1)
    assert weighted.weighted_sums(weights, columns).tobytes() == expected.tobytes()


def test_weighted_sums_of_one_row_and_of_no_units() -> None:
    columns = np.asarray([[0.5, 1.0], [0.25, 3.0]])
    assert weighted.weighted_sums(np.asarray([2, 4]), columns).tolist() == [2.0, 14.0]
    assert weighted.weighted_sums(np.zeros((3, 0), dtype=np.int32), np.zeros((0, 2))).tolist() == [[0.0, 0.0]] * 3


#: Bootstrap counts of 200 replicates of 25,300 units times three columns, summed in a process whose BLAS has the
#: threads ``OPENBLAS_NUM_THREADS`` says (read as the library loads): the hash of the sums' bytes.
THREADED = textwrap.dedent(
    """
    import hashlib
    import numpy as np
    from scorers.families.weighted import weighted_sums
    rng = np.random.default_rng(20261205)
    counts = rng.multinomial(25_300, np.full(25_300, 1 / 25_300), size=200).astype(np.int32)
    columns = rng.random((25_300, 3)) * 3
    print(hashlib.sha256(weighted_sums(counts, columns).tobytes()).hexdigest())
    """
)


@needs_two_cores
def test_weighted_sums_are_the_same_whatever_blas_threads_compute_them() -> None:
    """BLAS's matrix product of these weights and columns differs in its last bits between one thread and two: an
    interval must not depend on the worker's cores."""
    found = outputs_by_blas_threads(THREADED)
    assert found["1"] == found["2"]
