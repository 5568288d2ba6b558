"""Pearson's r, Spearman's rho and Kendall's tau-b of two float arrays, as SciPy 1.17 computes them, the same on every
machine.

Written by hand with numpy because importing ``scipy.stats`` takes about 0.6 s, twenty times a bare Python's
start-up, where ``podium score``'s start-up goal is 3x a bare Python. Each function follows SciPy's own steps with
the same numpy calls in the same order, but one: where SciPy sums products with BLAS (the dot product of Pearson's
r, the matrix product inside numpy's ``corrcoef`` for Spearman's rho), they are summed here by numpy's pairwise
summation (``_dot``). BLAS splits a long vector among as many threads as the machine has cores and uses its
processor's kernel, so SciPy's last bit depends on the machine that computes it (Pearson's r of 200,000 pairs:
one unit in the last place between one and two threads); a score must not depend on which worker computed it.
``tests/scorers/families/test_correlation.py`` compares them with ``scipy.stats.pearsonr``, ``spearmanr`` and
``kendalltau`` on generated inputs (ties, nearly constant arrays, large and small magnitudes): Spearman's rho and
Kendall's tau-b with ``==`` (ranks are integers or halves, whose sums are exact either way), Pearson's r within
``n`` units of 2**-52 (each order of summing is within ``n`` units of 2**-53 of the exact sum), and checks that each
is the same with one and with several BLAS threads.

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
        # SciPy's ``vecdot``, a BLAS dot product: summed by numpy instead, the same on every machine.
        r = _dot(xm / normxm, ym / normym)
    r = np.clip(r, -1.0, 1.0)
    if x.shape[-1] == 2:  # SciPy rounds two pairs' r to exactly 1 or -1
        r = np.round(r)
    return float(r)


def spearman(x: Array, y: Array) -> float:
    """``scipy.stats.spearmanr(x, y).statistic``: numpy's ``corrcoef`` of the average ranks, as SciPy does it, its
    products summed by ``_dot``: the covariance (the sum of the centred ranks' products over ``n - 1``), divided by
    the second side's deviation and then the first's, clipped to [-1, 1]."""
    if np.isnan(x).any() or np.isnan(y).any():
        return float("nan")
    rx, ry = average_ranks(x), average_ranks(y)
    xm, ym = rx - rx.mean(), ry - ry.mean()
    factor = np.true_divide(1, len(x) - 1)
    r = _dot(ym, xm) * factor / np.sqrt(_dot(ym, ym) * factor) / np.sqrt(_dot(xm, xm) * factor)
    return float(np.clip(r, -1.0, 1.0))


def _dot(a: Array, b: Array) -> Any:
    """The sum of ``a * b`` by numpy's pairwise summation, whose order is fixed by the length alone: the same float
    with any number of threads and on any processor, where BLAS's dot product is not."""
    return np.add.reduce(a * b)


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
