"""Binary classification: accuracy, and precision, recall and F1 of the positive class.

Each unit holds its gold and predicted label (0 or 1), so any multiset of units aggregates. The numbers are
those of scikit-learn's ``accuracy_score`` and ``precision_recall_fscore_support`` with ``average="binary"``
and ``zero_division=0``, as the seed tasks' official scripts use them, computed here from the four counts of
the confusion matrix with scikit-learn's own formulas (F1 = 2·TP / (gold positives + predicted positives)), so
that they are equal to the last bit. Written by hand because importing scikit-learn takes about 0.8 s, more
than counting 50,000 units, and a breakdown by 253 frames would call it 253 times (1.7 ms a call).
A zero denominator gives 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from scorers.families import weighted

# numpy is imported inside the function that uses it, so that loading the scorer library costs no numpy import.

METRICS = ("accuracy", "precision", "recall", "f1")

K = TypeVar("K", bound=Hashable)


def unit_stats(gold: int, predicted: int) -> dict[str, int]:
    """Per-unit statistics: the two labels, each 0 or 1."""
    return {"gold": gold, "predicted": predicted}


@dataclass
class Counts:
    """The confusion matrix of a set of units: true and false positives, false and true negatives."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, stats: Mapping[str, Any]) -> None:
        if stats["gold"]:
            if stats["predicted"]:
                self.tp += 1
            else:
                self.fn += 1
        elif stats["predicted"]:
            self.fp += 1
        else:
            self.tn += 1

    def scores(self) -> dict[str, float]:
        """Accuracy, precision, recall and F1 of label 1; all 0 for no unit at all."""
        units = self.tp + self.fp + self.fn + self.tn
        predicted, gold = self.tp + self.fp, self.tp + self.fn
        return {
            "accuracy": (self.tp + self.tn) / units if units else 0.0,
            "precision": self.tp / predicted if predicted else 0.0,
            "recall": self.tp / gold if gold else 0.0,
            "f1": 2 * self.tp / (gold + predicted) if gold + predicted else 0.0,
        }


def binary_scores(stats: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Accuracy, precision, recall and F1 of label 1 over the units; all 0 for no unit at all."""
    counts = Counts()
    for item in stats:
        counts.add(item)
    return counts.scores()


def grouped_scores(items: Iterable[tuple[K, Mapping[str, Any]]]) -> dict[K, dict[str, float]]:
    """``binary_scores`` of each group of ``(group, unit stats)`` items, in one pass over the items."""
    groups: dict[K, Counts] = {}
    for group, stats in items:
        counts = groups.get(group)
        if counts is None:
            counts = groups[group] = Counts()
        counts.add(stats)
    return {group: counts.scores() for group, counts in groups.items()}


def weighted_metric(stats: Sequence[Mapping[str, Any]], metric: str) -> weighted.WeightedMetric:
    """``metric`` of ``binary_scores`` on many weightings of the units (``scorers.families.weighted``)."""
    import numpy as np

    gold = np.asarray([bool(s["gold"]) for s in stats], dtype=np.float64)
    predicted = np.asarray([bool(s["predicted"]) for s in stats], dtype=np.float64)
    if metric == "accuracy":
        return weighted.ratio((gold == predicted).astype(np.float64), np.ones(len(stats)))
    part = {"precision": "p", "recall": "r", "f1": "f1"}[metric]
    return weighted.prf(part, gold * predicted, predicted, gold)
