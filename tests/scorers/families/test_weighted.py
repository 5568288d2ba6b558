"""Weighted metrics: a row of unit counts gives what the plain aggregation gives on the repeated units."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers.base import prf as plain_prf
from scorers.families import binary, weighted
from scorers.families.averaging import nested_mean


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
