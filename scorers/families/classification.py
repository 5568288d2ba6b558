"""Grouped classification metrics: precision, recall and F1 per group, then a hierarchical mean of groups.

Items carry a group key, a gold label and a predicted label. ``group_prf`` scores every group on its
own exactly as scikit-learn's ``precision_recall_fscore_support(gold, pred, average=..., zero_division=0)``
scores that group's items (``macro``: the unweighted mean over the labels that occur in the group's gold
or predictions, so a group whose gold and predictions are all one label scores 1). ``aggregate`` then
averages any multiset of scored groups, level by level (SV-Ident: groups of a language, then languages),
so that a subset or a bootstrap resample aggregates exactly like the whole.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from scorers.families.averaging import nested_mean
from scorers.families.weighted import WeightedMetric

# numpy is imported inside the functions that use it, so that loading the scorer library (``podium score`` of a
# scorer that never needs it, the web tier) does not pay its import.
if TYPE_CHECKING:
    from scorers.families.weighted import Array as WeightedArray

#: The ``average`` modes of scikit-learn that ``group_prf`` supports for single-label items.
AVERAGES = ("macro", "weighted", "micro", "binary")
#: The metric names of a scored group, in reporting order.
PRF_METRICS = ("precision", "recall", "f1")

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class GroupPRF:
    """One group's precision, recall and F1, and how many items it holds."""

    precision: float
    recall: float
    f1: float
    size: int
    #: The share of the group's items labelled right (not part of equality: the three numbers above are the score).
    accuracy: float = field(default=0.0, compare=False)

    def metrics(self) -> dict[str, float]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1}


def group_prf(
    items: Iterable[tuple[K, Hashable, Hashable]],
    *,
    average: str = "macro",
    pos_label: Hashable = 1,
    zero_division: float = 0.0,
) -> dict[K, GroupPRF]:
    """Score each group of ``(group, gold_label, predicted_label)`` items as scikit-learn scores it.

    ``average`` is ``macro`` (mean over the group's labels), ``weighted`` (weighted by gold support),
    ``micro`` (pooled counts; for single-label items this is accuracy) or ``binary`` (the numbers of
    ``pos_label``; where the group has no such label in gold or predictions, all three are ``zero_division``).
    Every zero denominator gives ``zero_division`` (scikit-learn's option of that name, 0 or 1). The result does
    not depend on the order of the items.

    Written in plain Python, without numpy or scikit-learn: the items are counted in one C pass
    (``Counter``), and the Python work is one step per distinct (group, gold, predicted) triple, a handful
    per group, so a scorer that needs nothing else does not pay numpy's import (about 85 ms of CPU, more
    than scoring 3,000 groups). The numbers are scikit-learn's: the same counts by the same formulas
    (F1 = 2·TP / (gold + predicted)), each a correctly rounded quotient of integers as numpy's is.
    """
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {', '.join(AVERAGES)}, not {average!r}")
    empty = float(zero_division)
    out: dict[K, GroupPRF] = {}
    for group, tally in _tallies(items).items():
        size = sum(counts[1] for counts in tally.values())
        accuracy = sum(counts[0] for counts in tally.values()) / size
        if average == "micro":
            out[group] = GroupPRF(accuracy, accuracy, accuracy, size, accuracy)
            continue
        if average == "binary":
            positive = tally.get(pos_label)
            p, r, f = (empty,) * 3 if positive is None else _label_prf(positive, empty)
            out[group] = GroupPRF(p, r, f, size, accuracy)
            continue
        scores = [_label_prf(counts, empty) for counts in tally.values()]
        weights = [counts[1] for counts in tally.values()] if average == "weighted" else [1] * len(scores)
        total = sum(weights)
        # fsum makes each mean exactly rounded, hence independent of the order in which labels were first seen.
        p, r, f = (math.fsum(s[i] * w for s, w in zip(scores, weights, strict=True)) / total for i in range(3))
        out[group] = GroupPRF(p, r, f, size, accuracy)
    return out


def _tallies(items: Iterable[tuple[K, Hashable, Hashable]]) -> dict[K, dict[Hashable, list[int]]]:
    """Per group, per label (in the order first seen): [true positives, gold support, predicted]."""
    tallies: dict[K, dict[Hashable, list[int]]] = {}
    for (group, gold, pred), count in Counter(items).items():
        tally = tallies.get(group)
        if tally is None:
            tally = tallies[group] = {}
        gold_counts = tally.get(gold)
        if gold_counts is None:
            gold_counts = tally[gold] = [0, 0, 0]
        pred_counts = tally.get(pred)
        if pred_counts is None:
            pred_counts = tally[pred] = [0, 0, 0]
        gold_counts[1] += count
        pred_counts[2] += count
        if gold_counts is pred_counts:  # the same label as a dictionary key sees it
            gold_counts[0] += count
    return tallies


def _label_prf(counts: list[int], empty: float) -> tuple[float, float, float]:
    """Precision, recall and F1 of one label from its [true positives, gold support, predicted] counts."""
    tp, gold, predicted = counts
    return (
        tp / predicted if predicted > 0 else empty,
        tp / gold if gold > 0 else empty,
        2 * tp / (gold + predicted) if gold + predicted > 0 else empty,
    )


def class_scores(
    pairs: Iterable[tuple[Hashable, Hashable]], *, zero_division: float = 0.0
) -> dict[Hashable, dict[str, float]]:
    """Precision, recall, F1 and gold support of each label of ``(gold, predicted)`` pairs, as scikit-learn's
    ``precision_recall_fscore_support(average=None)`` gives them for the labels that occur, in order of occurrence.

    The counts and formulas of ``group_prf``, for the pairs as one group."""
    empty = float(zero_division)
    tally = _tallies((None, gold, predicted) for gold, predicted in pairs).get(None, {})
    out: dict[Hashable, dict[str, float]] = {}
    for label, counts in tally.items():
        precision, recall, f1 = _label_prf(counts, empty)
        out[label] = {"precision": precision, "recall": recall, "f1": f1, "support": float(counts[1])}
    return out


def weighted_prf(
    pairs: Sequence[tuple[Hashable, Hashable]],
    metric: str,
    *,
    average: str = "macro",
    pos_label: Hashable = 1,
    zero_division: float = 0.0,
) -> WeightedMetric:
    """``metric`` (accuracy, precision, recall or f1) of ``group_prf`` on many weightings of the ``(gold, predicted)``
    pairs at once: per-label counts are weighted sums, so one matrix product serves every replicate (NaN: no item)."""
    import numpy as np

    code: dict[Hashable, int] = {}
    coded = np.asarray([(code.setdefault(g, len(code)), code.setdefault(p, len(code))) for g, p in pairs], np.intp)
    n, size = len(coded), len(code)
    columns = np.zeros((n, 3 * size + 2))
    rows = np.arange(n)
    if n:
        columns[rows, coded[:, 0]] = 1.0  # gold
        columns[rows, size + coded[:, 1]] = 1.0  # predicted
        hit = coded[:, 0] == coded[:, 1]
        columns[rows[hit], 2 * size + coded[hit, 0]] = 1.0  # true positives
        columns[rows[hit], 3 * size] = 1.0
    columns[:, 3 * size + 1] = 1.0
    positive = code.get(pos_label)

    def finish(sums: WeightedArray) -> WeightedArray:
        gold, predicted, tp = sums[:, :size], sums[:, size : 2 * size], sums[:, 2 * size : 3 * size]
        total = sums[:, 3 * size + 1]
        if metric == "accuracy" or average == "micro":
            return _ratio(sums[:, 3 * size], total)
        numerator, denominator = {"precision": (tp, predicted), "recall": (tp, gold), "f1": (2 * tp, gold + predicted)}[
            metric
        ]
        values = np.full(numerator.shape, float(zero_division))
        np.divide(numerator, denominator, out=values, where=denominator > 0)
        present = (gold + predicted) > 0
        if average == "binary":
            out = np.full(len(sums), float(zero_division)) if positive is None else values[:, positive].copy()
            if positive is not None:
                out[~present[:, positive]] = float(zero_division)
        else:
            weights = gold if average == "weighted" else present.astype(np.float64)
            out = _ratio((values * weights).sum(axis=1), weights.sum(axis=1))
        out[total == 0] = np.nan
        return out

    return WeightedMetric(columns, finish)


def _ratio(numerator: WeightedArray, denominator: WeightedArray) -> WeightedArray:
    import numpy as np

    out = np.full(len(numerator), np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def aggregate(records: Sequence[Mapping[str, Any]], levels: Sequence[str]) -> dict[str, float]:
    """Mean precision, recall and F1 over scored groups, level by level (see ``nested_mean``)."""
    return nested_mean(records, PRF_METRICS, levels)
