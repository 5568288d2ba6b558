"""Metrics of many weightings of the same units at once: the vectorized path of intervals and comparisons.

A replicate (a bootstrap resample, a jackknife leave-one-out, a system of a paired permutation test)
is a weighting of a score's units: ``weights[r, i]`` is how many times unit ``i`` counts in replicate
``r``. Every aggregation of the seed scorers is a function of weighted column sums: micro metrics
divide sums of counts, nested means divide sums of values by sums of counts, part by part, then average
the parts. So a ``WeightedMetric`` holds per-unit ``columns`` and a ``finish`` that turns the sums of a
replicate into the metric, and one matrix product gives a thousand replicates, where calling ``aggregate``
on a thousand lists of repeated units costs about a second at 3,000 units. Because the sums are linear in
the weights, callers can also take shortcuts (a leave-one-out is the total minus one row).

``finish`` returns NaN where the metric is undefined on a replicate (all its denominators are zero), where
the scorers' ``aggregate`` reports 0 by the tasks' convention: a replicate that measures nothing must not
count as a score of 0 in an interval.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

# numpy is imported inside the functions that use it, so that loading the scorer library (``podium score`` of a
# scorer that never needs it, the web tier) does not pay its import.
if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Array = NDArray[np.float64]


@dataclass(frozen=True)
class WeightedMetric:
    """A metric as ``finish(weights @ columns)``: ``columns`` is (units x k), ``finish`` maps sums to values."""

    columns: Array
    finish: Callable[[Array], Array]

    def __call__(self, weights: Array) -> Array:
        return self.finish(weighted_sums(weights, self.columns))


#: Each column is cut by ``weighted_sums`` into parts of ``bits`` bits (fewer as the weights grow), as many as give
#: ``_KEPT_BITS`` bits below its largest value: what is left out is far below what any BLAS product rounds away.
_KEPT_BITS = 60


def weighted_sums(weights: Array | NDArray[Any], columns: Array) -> Array:
    """``weights @ columns`` (a row of sums per row of weights), the same floats on every machine.

    BLAS splits a product among threads and picks its kernels per processor, so the last bits of ``weights @
    columns`` change with the machine and its core count: a score's interval would be another float on another
    worker. Where the weights are whole numbers (bootstrap counts, leave-one-out and permutation weights), each
    column is cut into parts, each a whole number of a unit of its own (a power of two, from the column's largest
    magnitude down), small enough that every product and partial sum of a part by a row of weights is a whole
    number below 2**53: exact, in whatever order BLAS adds (a column of small whole numbers, counts, is its own
    part). The parts' sums are scaled back and added in a fixed
    order, smallest first. Other weights, and values that are not finite, take numpy's pairwise sum of each
    column's products, also the same everywhere, at about four times the cost. Written by hand: no library gives a
    reproducible matrix product."""
    import math

    import numpy as np

    matrix = np.asarray(weights)
    columns = np.asarray(columns, dtype=np.float64)
    floats = matrix.astype(np.float64, copy=False)
    largest = np.max(np.abs(columns), axis=0, initial=0.0)
    if matrix.dtype.kind in "biu":  # whole numbers
        most = float(max(abs(int(np.max(matrix, initial=0))), abs(int(np.min(matrix, initial=0)))))
    elif np.all(floats == np.trunc(floats)):  # False for NaN
        most = float(np.max(np.abs(floats), initial=0.0))
    else:
        return _pairwise_sums(floats, columns)
    if not np.all(np.isfinite(largest)):
        return _pairwise_sums(floats, columns)
    # Every partial sum is at most the units' count times the largest weight times 2**bits.
    bound = float(matrix.shape[-1]) * most
    bits = 52 - math.ceil(math.log2(bound + 1.0)) if math.isfinite(bound) else 0
    count = math.ceil(_KEPT_BITS / bits) if bits >= 20 else 0
    # A column of whole numbers within 2**bits (counts) is its own single part; the others are cut.
    whole = np.all(columns == np.trunc(columns), axis=0) & (largest <= 2.0**bits)
    cut = np.flatnonzero(~whole)
    exponents = np.frexp(largest[cut])[1]  # |value| < 2**exponent
    if not count or np.any(exponents - count * bits < -1000):  # huge weights; values near underflow
        return _pairwise_sums(floats, columns)
    units = [np.ldexp(1.0, exponents - part * bits) for part in range(1, count + 1)]
    parts, rest = [columns[:, whole]], columns[:, cut]
    for unit in units:
        counted = np.round(rest / unit)  # at most 2**bits in magnitude
        parts.append(counted)
        rest = rest - counted * unit  # exact: a multiple of the value's last bit, no larger than it
    sums = floats @ np.concatenate(parts, axis=1)  # whole numbers below 2**53, exact in any order
    kept, width = int(np.count_nonzero(whole)), len(cut)
    out = np.empty((*sums.shape[:-1], columns.shape[1]))
    out[..., whole] = sums[..., :kept] + 0.0  # (+ 0.0: a zero's sign is not left to the order BLAS adds in)
    combined = np.zeros((*sums.shape[:-1], width))
    for part in reversed(range(count)):
        start = kept + part * width
        combined += sums[..., start : start + width] * units[part]
    out[..., cut] = combined
    return out


def _pairwise_sums(weights: Array, columns: Array) -> Array:
    """``weights @ columns`` by numpy's pairwise summation of each column's products along a row."""
    import numpy as np

    out = np.empty((*weights.shape[:-1], columns.shape[1]))
    for index in range(columns.shape[1]):
        out[..., index] = np.add.reduce(weights * columns[:, index], axis=-1)
    return out


def column(values: Sequence[float] | Array) -> Array:
    """Per-unit values as a float column."""
    import numpy as np

    return np.asarray(values, dtype=np.float64)


def _divide(numerator: Array, denominator: Array) -> Array:
    import numpy as np

    out = np.full(len(numerator), np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def ratio(numerator: Sequence[float] | Array, denominator: Sequence[float] | Array) -> WeightedMetric:
    """``sum(w * numerator) / sum(w * denominator)`` per replicate; NaN where the denominator sums to 0."""
    import numpy as np

    return WeightedMetric(
        np.stack([column(numerator), column(denominator)], axis=1), lambda sums: _divide(sums[:, 0], sums[:, 1])
    )


def prf(
    part: str, correct: Sequence[float] | Array, predicted: Sequence[float] | Array, gold: Sequence[float] | Array
) -> WeightedMetric:
    """Micro precision (``p``), recall (``r``) or F1 (``f1``) from per-unit counts.

    F1 is ``2 * correct / (predicted + gold)``, equal to ``2PR / (P + R)`` wherever that is defined, and
    also defined (as 0) when one of P and R is not; it is undefined only when nothing was predicted and
    nothing was to be found.
    """
    if part == "p":
        return ratio(correct, predicted)
    if part == "r":
        return ratio(correct, gold)
    if part == "f1":
        return ratio(2 * column(correct), column(predicted) + column(gold))
    raise KeyError(f"no micro metric part {part!r} (p, r or f1)")


def triples(stats: Sequence[Mapping[str, Any]], key: str) -> tuple[Array, Array, Array]:
    """The correct, predicted and gold columns of units holding ``[correct, predicted, gold]`` under ``key``."""
    import numpy as np

    table = np.asarray([s[key] for s in stats], dtype=np.float64).reshape(len(stats), 3)
    return table[:, 0], table[:, 1], table[:, 2]


def unit_column(stats: Sequence[Mapping[str, Any]], key: str) -> list[float]:
    """``float(stats[i][key])`` for every unit."""
    return [float(s[key]) for s in stats]


def nested_mean(values: Sequence[float], keys: Sequence[Sequence[Hashable]]) -> WeightedMetric:
    """The weighted counterpart of ``averaging.nested_mean`` for one metric.

    ``keys[i]`` lists unit ``i``'s key at each level, outermost first (``("de",)`` to average per
    language, then over languages; ``()`` for a plain mean). A part whose units all have weight 0 is
    absent from its replicate, as a language missing from a resample is absent from ``nested_mean``.
    """
    import numpy as np

    depth = len(keys[0]) if len(keys) else 0
    if any(len(k) != depth for k in keys):
        raise ValueError("every unit needs a key at every level")
    leaves: dict[tuple[Hashable, ...], int] = {}
    leaf_of = np.asarray([leaves.setdefault(tuple(k), len(leaves)) for k in keys], dtype=np.intp)
    x = column(values)
    # Two columns per leaf part: the weighted sum of its values and its weighted count.
    columns = np.zeros((len(x), 2 * max(1, len(leaves))))
    columns[np.arange(len(x)), 2 * leaf_of] = x
    columns[np.arange(len(x)), 2 * leaf_of + 1] = 1.0
    tree = _tree(list(leaves), 0, depth)

    def finish(sums: Array) -> Array:
        return _mean_of(tree, _divide_columns(sums[:, 0::2], sums[:, 1::2]))

    return WeightedMetric(columns, finish)


Tree = int | list["Tree"]


def _tree(paths: list[tuple[Hashable, ...]], level: int, depth: int, chosen: list[int] | None = None) -> Tree:
    """The leaf numbers nested by key, level by level (a leaf number where ``level == depth``)."""
    members = chosen if chosen is not None else list(range(len(paths)))
    if level == depth:
        return members[0]
    parts: dict[Hashable, list[int]] = {}
    for leaf in members:
        parts.setdefault(paths[leaf][level], []).append(leaf)
    return [_tree(paths, level + 1, depth, part) for part in parts.values()]


def _divide_columns(numerator: Array, denominator: Array) -> Array:
    import numpy as np

    out = np.full(numerator.shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _mean_of(tree: Tree, leaf_means: Array) -> Array:
    """The plain mean over the parts present (not NaN) in each row, level by level; NaN if none is."""
    import numpy as np

    if isinstance(tree, int):
        return leaf_means[:, tree]
    parts = np.stack([_mean_of(child, leaf_means) for child in tree], axis=1)
    present = ~np.isnan(parts)
    return _divide(np.where(present, parts, 0.0).sum(axis=1), present.sum(axis=1).astype(np.float64))
