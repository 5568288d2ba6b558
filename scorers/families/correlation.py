"""Pearson's r, Spearman's rho and Kendall's tau-b of two float arrays, exactly as SciPy 1.17 computes them.

Written by hand with numpy because importing ``scipy.stats`` takes about 0.6 s, twenty times a bare Python's
start-up, where ``podium score``'s start-up goal is 3x a bare Python. Each function follows SciPy's own steps
with the same numpy calls in the same order, so that the floats are the same to the last bit, not merely close:
``tests/scorers/families/test_correlation.py`` compares them with ``scipy.stats.pearsonr``, ``spearmanr`` and
``kendalltau`` with ``==`` on generated inputs (ties, nearly constant arrays, large and small magnitudes).

The callers have already set aside what SciPy calls undefined (fewer than two pairs, a constant side); a NaN in
either array gives NaN, as SciPy's default ``nan_policy="propagate"`` does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]


def pearson(x: Array, y: Array) -> float:
    """``scipy.stats.pearsonr(x, y).statistic`` (SciPy's steps: centre, scale by the largest deviation, norm, dot)."""
    xmean = np.mean(x, axis=-1, keepdims=True)
    ymean = np.mean(y, axis=-1, keepdims=True)
    xm = x - xmean
    ym = y - ymean
    xmax = np.max(np.abs(xm), axis=-1, keepdims=True)
    ymax = np.max(np.abs(ym), axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        # SciPy's ``xp_vector_norm`` is ``np.linalg.norm`` for numpy arrays (unless SCIPY_ARRAY_API is set).
        normxm = xmax * np.linalg.norm(xm / xmax, ord=2, axis=-1, keepdims=True)
        normym = ymax * np.linalg.norm(ym / ymax, ord=2, axis=-1, keepdims=True)
        # SciPy's ``vecdot``: for two float vectors numpy's ``vecdot`` and ``dot`` are one loop, the same BLAS dot
        # product (and ``dot`` is there before numpy 2).
        r = np.dot(xm / normxm, ym / normym)
    r = np.clip(r, -1.0, 1.0)
    if x.shape[-1] == 2:  # SciPy rounds two pairs' r to exactly 1 or -1
        r = np.round(r)
    return float(r)


def spearman(x: Array, y: Array) -> float:
    """``scipy.stats.spearmanr(x, y).statistic``: numpy's ``corrcoef`` of the average ranks, as SciPy does it."""
    a = np.column_stack((x, y))
    if np.isnan(a).any():
        return float("nan")
    # The same layout as SciPy's (``apply_along_axis`` over the stacked columns), for the same product in corrcoef.
    ranked = np.apply_along_axis(average_ranks, 0, a)
    return float(np.corrcoef(ranked, rowvar=False)[1, 0])


def average_ranks(x: Array) -> Array:
    """``scipy.stats.rankdata(x)``: ranks from 1, ties given the mean of their ranks (exact: integers or halves)."""
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    first = np.concatenate(([True], ordered[:-1] != ordered[1:]))
    starts = np.flatnonzero(first)
    counts = np.diff(starts, append=len(x))
    ranks = np.repeat((starts + 1).astype(np.float64) + (counts.astype(np.float64) - 1) / 2, counts)
    out = np.empty(len(x), dtype=np.float64)
    out[order] = ranks
    return out


def kendall(x: Array, y: Array) -> float:
    """``scipy.stats.kendalltau(x, y).statistic`` (tau-b), from the same integer counts and SciPy's formula."""
    if np.isnan(x).any() or np.isnan(y).any():
        return float("nan")
    size = x.size
    perm = np.argsort(y)  # sort on y and convert y to dense ranks
    x, y = x[perm], y[perm]
    y = np.r_[True, y[1:] != y[:-1]].cumsum(dtype=np.intp)
    perm = np.argsort(x, kind="mergesort")  # stable sort on x and convert x to dense ranks
    x, y = x[perm], y[perm]
    x = np.r_[True, x[1:] != x[:-1]].cumsum(dtype=np.intp)

    dis = inversions(y)  # discordant pairs: within equal x, y ascends and counts none

    obs = np.r_[True, (x[1:] != x[:-1]) | (y[1:] != y[:-1]), True]
    cnt = np.diff(np.nonzero(obs)[0]).astype("int64", copy=False)
    ntie = int((cnt * (cnt - 1) // 2).sum())  # joint ties
    xtie = _tied_pairs(x)
    ytie = _tied_pairs(y)
    tot = (size * (size - 1)) // 2
    if xtie == tot or ytie == tot:
        return float("nan")
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    return float(np.minimum(1.0, max(-1.0, tau)))


def _tied_pairs(ranks: Array) -> int:
    cnt = np.bincount(ranks).astype("int64", copy=False)
    cnt = cnt[cnt > 1]
    return int((cnt * (cnt - 1) // 2).sum())


def inversions(values: Array) -> int:
    """How many pairs ``i < j`` have ``values[i] > values[j]`` (non-negative integers), by a bottom-up merge sort.

    At each level the array is sorted within blocks of ``2**level``; each pair of neighbouring blocks is merged by one
    stable sort of the whole array (two sorted runs a block, which the sort merges in linear time), each value
    lifted by its new block's number times a bound above every value, so that blocks stay apart, and tagged by a
    last bit, 1 for the right block, so that a left value comes before an equal right one. A right value then moves
    left by the number of left values larger than it: the level's inversions are the right values' positions
    before the merge less their positions after. O(n log n) with a few numpy passes a level, no Python loop over
    the values (SciPy does this in C: 200,000 pairs take some tens of milliseconds more here).
    """
    n = len(values)
    bound = int(values.max(initial=0)) + 1
    position = np.arange(n, dtype=np.int64)
    current = values.astype(np.int64)
    total = 0
    level = 0
    while (1 << level) < n:
        right = (position >> level) & 1
        level += 1
        lift = (position >> level) * bound
        merged = ((current + lift) << 1) | right
        merged.sort(kind="stable")
        total += int(position[right == 1].sum()) - int(np.flatnonzero(merged & 1).sum())
        current = (merged >> 1) - lift
    return total
