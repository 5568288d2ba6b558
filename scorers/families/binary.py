"""Binary classification: accuracy, and precision, recall and F1 of the positive class.

Each unit holds its gold and predicted label (0 or 1), so any multiset of units aggregates. The
numbers come from scikit-learn (``accuracy_score`` and ``precision_recall_fscore_support`` with
``average="binary"``), as the seed tasks' official scripts use it; a zero denominator gives 0
(``zero_division=0``, which is also what scikit-learn's default reports, with a warning).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

METRICS = ("accuracy", "precision", "recall", "f1")


def unit_stats(gold: int, predicted: int) -> dict[str, int]:
    """Per-unit statistics: the two labels, each 0 or 1."""
    return {"gold": gold, "predicted": predicted}


def binary_scores(stats: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Accuracy, precision, recall and F1 of label 1 over the units; all 0 for no unit at all."""
    items = list(stats)
    if not items:
        return dict.fromkeys(METRICS, 0.0)
    gold = np.fromiter((item["gold"] for item in items), dtype=np.int8, count=len(items))
    predicted = np.fromiter((item["predicted"] for item in items), dtype=np.int8, count=len(items))
    precision, recall, f1, _ = precision_recall_fscore_support(
        gold, predicted, average="binary", pos_label=1, zero_division=0
    )
    return {
        "accuracy": float(accuracy_score(gold, predicted)),
        "precision": float(precision),
        "recall": float(recall),
        "f1": float(f1),
    }
