"""Regression metrics of paired gold and predicted numbers: correlations (as SciPy's) and errors.

``scores`` gives Pearson's r, Spearman's rho and Kendall's tau-b (the numbers of ``scipy.stats.pearsonr``,
``spearmanr`` and ``kendalltau``, computed by ``scorers.families.correlation`` without importing SciPy, whose import
is about 0.6 s, and the same on every machine: Spearman's and Kendall's bit for bit, Pearson's within a few units in
the last place, where SciPy's last bit depends on the machine's BLAS; a sample of at most 2,000 ordinary values
without numpy either, ``regression_plain``, to the same bit), the mean absolute error, the root mean
squared error and R² (as scikit-learn's ``r2_score``: 1 - residual sum of squares / total sum of squares, 1 for a
perfect fit of constant gold and 0 for an imperfect one; where scikit-learn's quotient overflows to -inf, the most
negative finite number).
A correlation is undefined when either side is constant or there are fewer than two pairs: it is 0 then (scipy would
say NaN, which no average or ranking can use). No pair at all gives 0 for every metric.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

# numpy is imported inside the functions that use it, so that loading the scorer library (``podium score`` of a
# scorer that never needs it, the web tier) does not pay its import.
if TYPE_CHECKING:
    import numpy as np


METRICS = ("pearson", "spearman", "kendall", "mae", "rmse", "r2")
#: The metrics where a smaller number is better; the others are better higher.
LOWER_IS_BETTER = frozenset({"mae", "rmse"})


def scores(gold: Sequence[float], predicted: Sequence[float], *, plain: bool = True) -> dict[str, float]:
    """The metrics of the pairs ``zip(gold, predicted)`` (see the module docstring): for a small sample of ordinary
    values the same floats computed without numpy (``regression_plain``), else with it. ``plain=False`` where the
    whole scoring is large (many groups, each small): numpy's import then pays for itself."""
    if not len(gold):
        return dict.fromkeys(METRICS, 0.0)
    from scorers.families import regression_plain

    if plain and regression_plain.applies(gold, predicted):
        return regression_plain.scores(gold, predicted)
    return numpy_scores(gold, predicted)


def numpy_scores(gold: Sequence[float], predicted: Sequence[float]) -> dict[str, float]:
    """``scores`` with numpy, for pairs of any size and any values (at least one pair)."""
    import numpy as np

    y = np.asarray(gold, dtype=np.float64)
    p = np.asarray(predicted, dtype=np.float64)
    errors = p - y
    residual = math.fsum((errors * errors).tolist())
    total = math.fsum(((y - y.mean()) ** 2).tolist())
    out = {
        "mae": math.fsum(np.abs(errors).tolist()) / len(y),
        "rmse": math.sqrt(residual / len(y)),
        "r2": r2(residual, total),
    }
    out.update(_correlations(y, p))
    return {m: float(out[m]) for m in METRICS}


def r2(residual: float, total: float) -> float:
    if not total:
        return 1.0 if residual == 0 else 0.0
    # Gold values a few ulps apart give a total sum of squares near nothing: the quotient can overflow, and the
    # metrics stay finite numbers (scikit-learn says -inf then).
    return max(1.0 - residual / total, -sys.float_info.max)


def _correlations(y: np.ndarray[Any, Any], p: np.ndarray[Any, Any]) -> dict[str, float]:
    import numpy as np

    from scorers.families import correlation

    if len(y) < 2 or np.ptp(y) == 0 or np.ptp(p) == 0:
        return {"pearson": 0.0, "spearman": 0.0, "kendall": 0.0}
    with np.errstate(all="ignore"):  # overflow in the sums of huge values: the NaN or infinity is then set to 0
        values = {
            "pearson": correlation.pearson(y, p),
            "spearman": correlation.spearman(y, p),
            "kendall": correlation.kendall(y, p),
        }
    return {name: value if math.isfinite(value) else 0.0 for name, value in values.items()}
