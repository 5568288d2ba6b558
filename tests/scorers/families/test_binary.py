"""Binary classification family: hand counts, zero division, any multiset of units, scikit-learn's numbers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers.families.binary import binary_scores, grouped_scores, unit_stats


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


@settings(max_examples=100, deadline=None)
@given(LABELS)
def test_scores_equal_scikit_learns_to_the_last_bit(pairs: list[tuple[int, int]]) -> None:
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    gold, predicted = [g for g, _ in pairs], [p for _, p in pairs]
    precision, recall, f1, _ = precision_recall_fscore_support(
        gold, predicted, average="binary", pos_label=1, zero_division=0
    )
    expected = {"accuracy": accuracy_score(gold, predicted), "precision": precision, "recall": recall, "f1": f1}
    assert binary_scores(units(pairs)) == {name: float(value) for name, value in expected.items()}


def test_grouped_scores_count_each_group_on_its_own() -> None:
    # a: TP, FP -> accuracy 1/2, P = 1/2, R = 1/1, F1 = 2*1 / (1 + 2) = 2/3; b: TN only -> accuracy 1, the rest 0
    items = [("a", unit_stats(1, 1)), ("b", unit_stats(0, 0)), ("a", unit_stats(0, 1))]
    assert grouped_scores(items) == {
        "a": {"accuracy": 0.5, "precision": 0.5, "recall": 1.0, "f1": 2 / 3},
        "b": {"accuracy": 1.0, "precision": 0.0, "recall": 0.0, "f1": 0.0},
    }


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("xyz"), st.integers(0, 1), st.integers(0, 1)), max_size=40))
def test_grouped_scores_equal_scoring_each_group_alone(items: list[tuple[str, int, int]]) -> None:
    grouped = grouped_scores((group, unit_stats(g, p)) for group, g, p in items)
    assert grouped == {
        group: binary_scores(unit_stats(g, p) for k, g, p in items if k == group) for group, _, _ in items
    }
