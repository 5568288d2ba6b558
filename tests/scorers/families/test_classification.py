"""Grouped classification metrics: hand-computed groups, scikit-learn agreement, group averaging."""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import precision_recall_fscore_support

from scorers.families.classification import AVERAGES, GroupPRF, aggregate, group_prf


def items(group: str, gold: list[int], pred: list[int]) -> list[tuple[str, Hashable, Hashable]]:
    return [(group, g, p) for g, p in zip(gold, pred, strict=True)]


# gold [1, 1, 0, 0], predicted [1, 0, 0, 0]:
#   label 1: tp 1, fp 0, fn 1 -> P 1,   R 1/2, F 2/3
#   label 0: tp 2, fp 1, fn 0 -> P 2/3, R 1,   F 4/5
MIXED = items("d", [1, 1, 0, 0], [1, 0, 0, 0])


def test_macro_is_the_mean_over_the_labels_of_the_group() -> None:
    # P (1 + 2/3) / 2 = 5/6, R (1/2 + 1) / 2 = 3/4, F (2/3 + 4/5) / 2 = 11/15.
    (scored,) = group_prf(MIXED).values()
    assert (scored.precision, scored.recall, scored.f1) == pytest.approx((5 / 6, 3 / 4, 11 / 15), abs=1e-15)
    assert scored.size == 4


def test_weighted_micro_and_binary() -> None:
    # weighted by gold support (2 and 2) equals macro here; micro = accuracy = 3/4; binary = label 1's numbers.
    assert group_prf(MIXED, average="weighted")["d"].f1 == pytest.approx(11 / 15, abs=1e-15)
    assert group_prf(MIXED, average="micro")["d"] == GroupPRF(0.75, 0.75, 0.75, 4)
    binary = group_prf(MIXED, average="binary")["d"]
    assert (binary.precision, binary.recall, binary.f1) == pytest.approx((1.0, 0.5, 2 / 3), abs=1e-15)


def test_weighted_uses_gold_support() -> None:
    # gold [1, 0, 0, 0], predicted [1, 1, 0, 0]: label 1: P 1/2, R 1, F 2/3 (support 1);
    # label 0: P 1, R 2/3, F 4/5 (support 3) -> weighted F (2/3 + 3 * 4/5) / 4 = 23/30.
    scored = group_prf(items("d", [1, 0, 0, 0], [1, 1, 0, 0]), average="weighted")["d"]
    assert scored.f1 == pytest.approx(23 / 30, abs=1e-15)


def test_a_group_that_is_all_zero_in_gold_and_predictions_scores_one() -> None:
    # Only label 0 occurs: tp 3, fp 0, fn 0 -> P = R = F = 1 (binary: label 1 never occurs -> 0).
    assert group_prf(items("d", [0, 0, 0], [0, 0, 0]))["d"] == GroupPRF(1.0, 1.0, 1.0, 3)
    assert group_prf(items("d", [0, 0, 0], [0, 0, 0]), average="binary")["d"] == GroupPRF(0.0, 0.0, 0.0, 3)


def test_all_wrong_scores_zero_without_warnings() -> None:
    # label 0: tp 0, fp 0 (P 0/0 -> 0), fn 2; label 1: tp 0, fp 2, fn 0 (R 0/0 -> 0) -> all 0.
    assert group_prf(items("d", [0, 0], [1, 1]))["d"] == GroupPRF(0.0, 0.0, 0.0, 2)


def test_groups_are_scored_separately_and_averaged_without_size_weights() -> None:
    # A one-sentence group that is wrong (F 0) weighs as much as a hundred-sentence perfect group (F 1).
    big = items("big", [1, 0] * 50, [1, 0] * 50)
    small = items("small", [1], [0])
    scored = group_prf(big + small)
    assert scored["big"].f1 == 1.0
    assert scored["small"].f1 == 0.0
    records = [{"language": "en", **prf.metrics()} for prf in scored.values()]
    assert aggregate(records, ["language"]) == {"precision": 0.5, "recall": 0.5, "f1": 0.5}


def test_labels_of_any_hashable_type() -> None:
    # "1" and 1 are two different labels to the family; adapters normalise labels first.
    scored = group_prf([("d", "yes", "yes"), ("d", "no", "yes")])["d"]
    # yes: P 1/2, R 1, F 2/3; no: P 0, R 0, F 0 -> macro F 1/3.
    assert scored.f1 == pytest.approx(1 / 3, abs=1e-15)


def test_no_items_no_groups() -> None:
    assert group_prf([]) == {}


def test_unknown_average_is_an_error() -> None:
    with pytest.raises(ValueError, match="average must be one of"):
        group_prf(MIXED, average="samples")


labelled_items = st.lists(
    st.tuples(st.sampled_from("abcd"), st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=40
)


@settings(max_examples=150, deadline=None)
@given(labelled_items, st.sampled_from(AVERAGES))
def test_every_group_is_what_scikit_learn_gives_for_that_group_alone(
    triples: list[tuple[str, int, int]], average: str
) -> None:
    if average == "binary":  # scikit-learn allows binary averaging only for two labels
        triples = [(g, t % 2, p % 2) for g, t, p in triples]
    scored = group_prf(triples, average=average)
    assert set(scored) == {g for g, _, _ in triples}
    for group, prf in scored.items():
        gold = [t for g, t, _ in triples if g == group]
        pred = [p for g, _, p in triples if g == group]
        expected = precision_recall_fscore_support(gold, pred, average=average, zero_division=0)[:3]
        assert (prf.precision, prf.recall, prf.f1) == pytest.approx(expected, abs=1e-15)
        assert prf.size == len(gold)


@settings(max_examples=50, deadline=None)
@given(labelled_items, st.sampled_from(AVERAGES), st.randoms(use_true_random=False))
def test_order_of_items_never_changes_a_bit(
    triples: list[tuple[str, int, int]], average: str, rng: random.Random
) -> None:
    shuffled = list(triples)
    rng.shuffle(shuffled)
    assert group_prf(shuffled, average=average) == group_prf(triples, average=average)


def _per_class(
    gold: np.ndarray[Any, Any], pred: np.ndarray[Any, Any], classes: np.ndarray[Any, Any], zero_division: float = 0.0
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Precision, recall, F1 and gold support of each of the sorted ``classes``.

    The numbers of scikit-learn's ``precision_recall_fscore_support(average=None, zero_division=...)``, from the
    same counts by the same formulas (F1 = 2·TP / (gold + predicted)), so equal to the last bit. Written with
    numpy because importing scikit-learn takes about 0.8 s, more than scoring 3,000 groups.
    """
    gold_at, pred_at = np.searchsorted(classes, gold), np.searchsorted(classes, pred)
    size = len(classes)
    tp = np.bincount(gold_at[gold == pred], minlength=size)
    support = np.bincount(gold_at, minlength=size)
    predicted = np.bincount(pred_at, minlength=size)
    f1 = _divide(2 * tp, support + predicted, zero_division)
    return _divide(tp, predicted, zero_division), _divide(tp, support, zero_division), f1, support


def _divide(
    numerator: np.ndarray[Any, Any], denominator: np.ndarray[Any, Any], zero_division: float = 0.0
) -> np.ndarray[Any, Any]:
    """Element-wise quotient; ``zero_division`` where the denominator is 0."""
    out = np.full(len(numerator), float(zero_division), dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def numpy_group_prf(
    items: Iterable[tuple[str, Hashable, Hashable]], average: str, pos_label: Hashable, zero_division: float
) -> dict[str, GroupPRF]:
    """The numpy implementation ``group_prf`` had before it was written in plain Python, kept as a reference:
    every (group, label) pair one class, counted with ``bincount``, each group's classes averaged with fsum."""
    groups: dict[str, int] = {}
    labels: dict[Hashable, int] = {}
    codes = []
    for group, gold, pred in items:
        g = groups.setdefault(group, len(groups))
        codes.append((g, labels.setdefault(gold, len(labels)), labels.setdefault(pred, len(labels))))
    n_labels = len(labels)
    table = np.asarray(codes, dtype=np.int64)
    gold_classes = table[:, 0] * n_labels + table[:, 1]
    pred_classes = table[:, 0] * n_labels + table[:, 2]
    classes = np.union1d(gold_classes, pred_classes)
    precision, recall, f1, support = _per_class(gold_classes, pred_classes, classes, zero_division)
    sizes = np.bincount(table[:, 0], minlength=len(groups))
    correct = np.bincount(table[table[:, 1] == table[:, 2], 0], minlength=len(groups))
    bounds = np.searchsorted(classes // n_labels, np.arange(len(groups) + 1))
    pos_code = labels.get(pos_label)
    out = {}
    for group, g in groups.items():
        run = slice(int(bounds[g]), int(bounds[g + 1]))
        size = int(sizes[g])
        accuracy = int(correct[g]) / size
        if average == "micro":
            out[group] = GroupPRF(accuracy, accuracy, accuracy, size, accuracy)
        elif average == "binary":
            at = [i for i in range(run.start, run.stop) if classes[i] % n_labels == pos_code]
            values = (precision[at[0]], recall[at[0]], f1[at[0]]) if at else (zero_division,) * 3
            out[group] = GroupPRF(float(values[0]), float(values[1]), float(values[2]), size, accuracy)
        else:
            weights = support[run] if average == "weighted" else np.ones(run.stop - run.start, dtype=np.int64)
            p, r, f = (
                math.fsum(float(v) * int(w) for v, w in zip(values[run], weights, strict=True)) / int(weights.sum())
                for values in (precision, recall, f1)
            )
            out[group] = GroupPRF(p, r, f, size, accuracy)
    return out


def bits(scored: dict[str, GroupPRF]) -> list[tuple[str, int, tuple[str, ...]]]:
    """Every number of every group as its exact hexadecimal form, accuracy included, in the order of the groups."""
    return [
        (group, s.size, tuple(float.hex(v) for v in (s.precision, s.recall, s.f1, s.accuracy)))
        for group, s in scored.items()
    ]


# Groups of up to 60 items: the detection task's 0/1 labels, and up to five labels of mixed types (1 and True are
# one label to a dictionary, "1" another), so that groups hold from one to five classes.
any_labels = st.one_of(st.integers(0, 1), st.integers(0, 4), st.sampled_from([0, 1, True, "1", "a", 2.0]))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda groups: st.lists(
            st.tuples(st.integers(0, groups - 1).map(str), any_labels, any_labels), min_size=1, max_size=60
        )
    ),
    st.sampled_from(AVERAGES),
    st.sampled_from([1, "1", "a", 7]),
    st.sampled_from([0.0, 1.0]),
)
def test_the_plain_python_counts_give_the_numpy_numbers_bit_for_bit(
    triples: list[tuple[str, Hashable, Hashable]], average: str, pos_label: Hashable, zero_division: float
) -> None:
    expected = numpy_group_prf(triples, average, pos_label, zero_division)
    scored = group_prf(triples, average=average, pos_label=pos_label, zero_division=zero_division)
    assert bits(scored) == bits(expected)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30).map(str), st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=400),
    st.sampled_from(AVERAGES),
)
def test_detection_groups_are_scikit_learns_numbers_to_the_last_bit_where_it_sums_exactly(
    triples: list[tuple[str, int, int]], average: str
) -> None:
    # Labels 0 and 1, as SV-Ident Task 1 has them: at most two classes a group, whose mean scikit-learn takes with
    # numpy's sum of two numbers, which is exactly rounded as fsum is; so the numbers are equal, not only close.
    scored = group_prf(triples, average=average)
    for group, prf in scored.items():
        gold = [t for g, t, _ in triples if g == group]
        pred = [p for g, _, p in triples if g == group]
        expected = precision_recall_fscore_support(gold, pred, average=average, zero_division=0)[:3]
        assert (prf.precision, prf.recall, prf.f1) == tuple(float(v) for v in expected)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([0, 1, 2, "a", True]), st.sampled_from([0, 1, 2, "a", True])), min_size=1),
    st.sampled_from([0.0, 1.0]),
)
def test_class_scores_are_the_numpy_reference_bit_for_bit(pairs: list[tuple[Hashable, Hashable]], zero: float) -> None:
    from scorers.families.classification import class_scores

    code: dict[Hashable, int] = {}
    coded = [(code.setdefault(g, len(code)), code.setdefault(p, len(code))) for g, p in pairs]
    table = np.asarray(coded, dtype=np.int64).reshape(-1, 2)
    precision, recall, f1, support = _per_class(table[:, 0], table[:, 1], np.arange(len(code)), zero)
    expected = {
        label: {"precision": precision[i], "recall": recall[i], "f1": f1[i], "support": support[i]}
        for label, i in code.items()
    }
    got = class_scores(pairs, zero_division=zero)
    assert list(got) == list(expected)  # labels in order of occurrence
    assert {k: {m: float(v).hex() for m, v in d.items()} for k, d in got.items()} == {
        k: {m: float(v).hex() for m, v in d.items()} for k, d in expected.items()
    }
