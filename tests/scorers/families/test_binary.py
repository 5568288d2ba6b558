"""Binary classification family: hand counts, zero division, any multiset of units."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers.families.binary import binary_scores, unit_stats


def units(pairs: list[tuple[int, int]]) -> list[dict[str, int]]:
    return [unit_stats(g, p) for g, p in pairs]


def test_unit_stats_hold_both_labels() -> None:
    assert unit_stats(1, 0) == {"gold": 1, "predicted": 0}


def test_hand_counts() -> None:
    # TP 2 (1,1)x2, FP 1 (0,1), FN 1 (1,0), TN 1 (0,0): accuracy 3/5, P = 2/3, R = 2/3, F1 = 2/3
    scores = binary_scores(units([(1, 1), (1, 1), (0, 1), (1, 0), (0, 0)]))
    assert scores["accuracy"] == pytest.approx(0.6)
    assert scores["precision"] == pytest.approx(2 / 3)
    assert scores["recall"] == pytest.approx(2 / 3)
    assert scores["f1"] == pytest.approx(2 / 3)


def test_zero_division_gives_zero_without_warning() -> None:
    # all gold and predictions negative: accuracy 1, P and R are 0/0 -> 0 (filterwarnings=error would fail on a warning)
    assert binary_scores(units([(0, 0), (0, 0)])) == {"accuracy": 1.0, "precision": 0.0, "recall": 0.0, "f1": 0.0}
    # nothing predicted positive: P = 0/0 -> 0, R = 0/2
    assert binary_scores(units([(1, 0), (1, 0)])) == {"accuracy": 0.0, "precision": 0.0, "recall": 0.0, "f1": 0.0}
    # all predicted positive, one gold positive of 4: P = 1/4, R = 1, F1 = 2*0.25/1.25 = 0.4
    scores = binary_scores(units([(1, 1), (0, 1), (0, 1), (0, 1)]))
    assert (scores["precision"], scores["recall"]) == (0.25, 1.0)
    assert scores["f1"] == pytest.approx(0.4)


def test_no_units_score_zero() -> None:
    assert binary_scores([]) == {"accuracy": 0.0, "precision": 0.0, "recall": 0.0, "f1": 0.0}


LABELS = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=40)


@settings(max_examples=100, deadline=None)
@given(LABELS)
def test_scores_equal_counts_formula(pairs: list[tuple[int, int]]) -> None:
    tp = sum(1 for g, p in pairs if g and p)
    fp = sum(1 for g, p in pairs if not g and p)
    fn = sum(1 for g, p in pairs if g and not p)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    scores = binary_scores(units(pairs))
    assert scores["accuracy"] == pytest.approx(sum(1 for g, p in pairs if g == p) / len(pairs))
    assert scores["precision"] == pytest.approx(precision)
    assert scores["recall"] == pytest.approx(recall)
    assert scores["f1"] == pytest.approx(f1)
    # a multiset with every unit twice has the same ratios (bootstrap resamples repeat units)
    assert binary_scores(units(pairs + pairs)) == pytest.approx(scores)
