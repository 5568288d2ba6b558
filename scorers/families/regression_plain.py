"""The regression metrics of a small sample in plain Python: the floats ``regression.numpy_scores`` computes with numpy,
to the last bit, without importing numpy (about 50 ms, most of a test-size ``podium score``'s start-up).

Each step is numpy's, done the same way in Python. A sum is numpy's pairwise summation (``pairwise_sum``: eight
accumulators over a run of up to 128 values, a longer run halved at a multiple of eight), which ``np.add.reduce``
and ``mean`` use for a float array; each other operation is one IEEE operation on doubles, correctly rounded in
both (``+ - * /``, ``abs``, ``sqrt``); the sums of the errors are ``math.fsum`` in both, and Kendall's counts are
integers. Written by hand because no library computes numpy's sums without numpy.

``regression.scores`` takes this way only for at most ``PLAIN_MAX`` pairs whose values are all finite and at most
``PLAIN_BOUND`` in size: no step can overflow then, so no infinity or NaN (whose handling differs between numpy,
which carries it on, and Python, which raises on some) ever arises. ``tests/scorers/families/test_regression_plain.py``
compares both ways float for float.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scorers.families.regression import METRICS, r2

#: The most pairs scored without numpy (a Python loop per value costs more than numpy's import past a few thousand).
PLAIN_MAX = 2000
#: The largest size of a value scored without numpy: squares and sums of such values stay far from overflowing.
PLAIN_BOUND = 1e150
#: numpy's ``PW_BLOCKSIZE``: the longest run summed with eight accumulators before it is halved.
_BLOCK = 128


def applies(gold: Sequence[float], predicted: Sequence[float]) -> bool:
    """Whether ``scores`` gives numpy's floats for these pairs (NaN and infinities fail the comparisons)."""
    return len(gold) <= PLAIN_MAX and all(-PLAIN_BOUND <= v <= PLAIN_BOUND for side in (gold, predicted) for v in side)


def pairwise_sum(values: Sequence[float], start: int = 0, count: int | None = None) -> float:
    """``np.add.reduce`` of ``values[start:start + count]`` as numpy sums a float array (``pairwise_sum_DOUBLE``)."""
    n = len(values) - start if count is None else count
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += values[i]
        return total
    if n <= _BLOCK:
        r0, r1, r2_, r3, r4, r5, r6, r7 = values[start : start + 8]
        end = start + n - n % 8
        for i in range(start + 8, end, 8):
            r0 += values[i]
            r1 += values[i + 1]
            r2_ += values[i + 2]
            r3 += values[i + 3]
            r4 += values[i + 4]
            r5 += values[i + 5]
            r6 += values[i + 6]
            r7 += values[i + 7]
        total = ((r0 + r1) + (r2_ + r3)) + ((r4 + r5) + (r6 + r7))
        for i in range(end, start + n):
            total += values[i]
        return total
    half = n // 2
    half -= half % 8
    return pairwise_sum(values, start, half) + pairwise_sum(values, start + half, n - half)


def mean(values: Sequence[float]) -> float:
    return pairwise_sum(values) / len(values)


def scores(gold: Sequence[float], predicted: Sequence[float]) -> dict[str, float]:
    """``regression.numpy_scores(gold, predicted)`` for pairs that ``applies`` to (at least one)."""
    y = [float(v) for v in gold]
    p = [float(v) for v in predicted]
    errors = [b - a for a, b in zip(y, p, strict=True)]
    residual = math.fsum([e * e for e in errors])
    centre = mean(y)
    total = math.fsum([(v - centre) * (v - centre) for v in y])
    out = {
        "mae": math.fsum([abs(e) for e in errors]) / len(y),
        "rmse": math.sqrt(residual / len(y)),
        "r2": r2(residual, total),
    }
    if len(y) < 2 or max(y) == min(y) or max(p) == min(p):
        out.update(pearson=0.0, spearman=0.0, kendall=0.0)
    else:
        out.update(pearson=pearson(y, p), spearman=spearman(y, p), kendall=kendall(y, p))
    return {m: out[m] for m in METRICS}


def pearson(x: list[float], y: list[float]) -> float:
    """``correlation.pearson``: centred, scaled by the largest deviation, normed, the products summed."""
    norms = []
    centred = []
    for side in (x, y):
        centre = mean(side)
        deviations = [v - centre for v in side]
        largest = max(abs(v) for v in deviations)
        scaled = [v / largest for v in deviations]
        norms.append(largest * math.sqrt(pairwise_sum([v * v for v in scaled])))
        centred.append(deviations)
    r = pairwise_sum([(a / norms[0]) * (b / norms[1]) for a, b in zip(*centred, strict=True)])
    r = min(max(r, -1.0), 1.0)
    return round(r, 0) if len(x) == 2 else r  # numpy's round: half to even, the sign of a zero kept


def spearman(x: list[float], y: list[float]) -> float:
    """``correlation.spearman``: the covariance of the average ranks over both deviations."""
    rx, ry = average_ranks(x), average_ranks(y)
    cx, cy = mean(rx), mean(ry)
    xm = [v - cx for v in rx]
    ym = [v - cy for v in ry]
    factor = 1 / (len(x) - 1)
    covariance = pairwise_sum([b * a for a, b in zip(xm, ym, strict=True)]) * factor
    r = covariance / math.sqrt(pairwise_sum([v * v for v in ym]) * factor)
    r = r / math.sqrt(pairwise_sum([v * v for v in xm]) * factor)
    return min(max(r, -1.0), 1.0)


def average_ranks(x: list[float]) -> list[float]:
    """``correlation.average_ranks``: ranks from 1 after a stable sort, ties given the mean of their ranks."""
    order = sorted(range(len(x)), key=x.__getitem__)
    out = [0.0] * len(x)
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and x[order[end]] == x[order[start]]:
            end += 1
        rank = float(start + 1) + (float(end - start) - 1) / 2
        for k in range(start, end):
            out[order[k]] = rank
        start = end
    return out


def kendall(x: list[float], y: list[float]) -> float:
    """``correlation.kendall``: tau-b from the same integer counts (pairs out of order, ties) and formula."""
    order = sorted(range(len(x)), key=lambda i: (x[i], y[i]))
    discordant = _inversions([y[i] for i in order])
    total = len(x) * (len(x) - 1) // 2
    x_ties, y_ties = _tied_pairs(x), _tied_pairs(y)
    joint = _tied_pairs(list(zip(x, y, strict=True)))
    if x_ties == total or y_ties == total:
        return math.nan
    difference = total - x_ties - y_ties + joint - 2 * discordant
    tau = difference / math.sqrt(total - x_ties) / math.sqrt(total - y_ties)
    return min(1.0, max(-1.0, tau))


def _tied_pairs(values: Sequence[object]) -> int:
    counts: dict[object, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return sum(c * (c - 1) // 2 for c in counts.values())


def _inversions(values: list[float]) -> int:
    """How many pairs ``i < j`` have ``values[i] > values[j]``, by a merge sort."""
    if len(values) < 2:
        return 0
    middle = len(values) // 2
    left, right = values[:middle], values[middle:]
    count = _inversions(left) + _inversions(right)
    left.sort()
    right.sort()
    j = 0
    for value in left:  # each left value counts the right values smaller than it
        while j < len(right) and right[j] < value:
            j += 1
        count += j
    return count
