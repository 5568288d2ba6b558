"""CEAF-RME's one-to-one maximum-weight matchings: exhaustive when small, else SciPy's ``linear_sum_assignment``."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

Matrix = Sequence[Sequence[float]]
#: Matchings small enough to find by trying every one-to-one assignment (at most this many of them).
EXHAUSTIVE_ASSIGNMENTS = 720
#: Two assignments whose sums are this close (relative) are a tie, which SciPy breaks as it always did.
TIE = 1e-9


def max_assignment(matrix: Matrix, *, ties: bool) -> tuple[list[int], list[int]]:
    """Rows (ascending) and columns of a one-to-one maximum-weight matching.

    A small matrix is solved by trying every assignment: written by hand because SciPy's optimize package takes
    about 0.4 s to import, more than scoring a test-size file, and the release's matrices are tiny (at most 5
    entities of a role, 2 templates of a document). Where only the matched sum is wanted (``ties=True``), any
    best assignment gives it. Where the pairs matter too (``ties=False``), only a best assignment clear of every
    other by more than ``TIE`` is taken from the search: that is the one any exact solver finds, SciPy's
    included. Larger matrices, and those ties, go to SciPy's ``linear_sum_assignment``, as before.
    """
    found = _exhaustive_assignment(matrix, ties)
    if found is not None:
        return found
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(np.asarray(matrix, dtype=float), maximize=True)
    return rows.tolist(), cols.tolist()


def _exhaustive_assignment(matrix: Matrix, ties: bool) -> tuple[list[int], list[int]] | None:
    """The best assignment found by trying all (the first of equals); None when there are too many, or, unless
    ``ties``, when another is within ``TIE`` of the best."""
    transposed = len(matrix) > len(matrix[0])
    table = [list(column) for column in zip(*matrix, strict=True)] if transposed else matrix
    short, long = len(table), len(table[0])
    if math.perm(long, short) > EXHAUSTIVE_ASSIGNMENTS:
        return None
    best, runner_up = -math.inf, -math.inf
    chosen: tuple[int, ...] = ()
    for columns in itertools.permutations(range(long), short):
        total = sum(row[j] for row, j in zip(table, columns, strict=True))
        if total > best:
            best, runner_up, chosen = total, best, columns
        elif total > runner_up:
            runner_up = total
    if not ties and best - runner_up <= TIE * max(1.0, abs(best)):
        return None
    pairs = [(j, i) for i, j in enumerate(chosen)] if transposed else list(enumerate(chosen))
    pairs.sort()
    return [i for i, _ in pairs], [j for _, j in pairs]


def matched_sum(matrix: Matrix, rows: Sequence[int], cols: Sequence[int]) -> float:
    """The weights of a matching added in row order, as NumPy adds a handful of numbers."""
    total = 0.0
    for i, j in zip(rows, cols, strict=True):
        total += matrix[i][j]
    return total


def best_matching_sum(weights: Matrix) -> float:
    """Total weight of a one-to-one maximum-weight matching (weights are non-negative)."""
    if not weights or not weights[0]:
        return 0.0
    if len(weights) == 1 or len(weights[0]) == 1:
        return float(max(max(row) for row in weights))
    rows, cols = max_assignment(weights, ties=True)
    return matched_sum(weights, rows, cols)
