"""Paired comparisons between neighbours on a board, and the groups of systems the data cannot tell apart.

The test is paired approximate randomization (Noreen 1989; Riezler & Maxwell 2005), on the units both
systems were scored on: under the null hypothesis that the two systems are exchangeable, each unit's
statistics may belong to either, so each trial swaps every unit between them with probability 1/2 and
recomputes the metric of both through the scorer's aggregation (micro sums, nested means); the p-value
is the share of trials whose difference is at least as large as the observed one, two-sided, counting
the observed assignment ((1 + hits) / (1 + trials)). Swapping keeps every unit, and so every stratum, in
place. Two identical systems differ by 0 in every trial, so their p-value is 1.

Between the k-1 neighbour pairs of a board of k, the p-values are corrected with Holm's step-down method
(Holm 1979), which holds the chance of any false "significantly better" on the board at 1 - level. Trials
are enough for the smallest corrected p-value to reach the threshold (``trials_for``).

Groups, as the WMT findings papers cluster systems: a boundary is drawn below rank k when k is
significantly better than k+1; the runs between boundaries are the groups of statistically tied systems.
Only neighbours are tested, so a system may still differ significantly from one two places below it in
its group. A pair that cannot be compared (a system without unit statistics, different units, an
undefined metric) draws no conclusion and also draws a boundary: the board cannot claim them tied.

Hand-written rather than ``scipy.stats.permutation_test``: its statistic would receive arrays, not the
scorer's unit statistics, and it cannot set aside trials on which the metric is undefined; the test
suite checks that both give the same p-values on a difference of means.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from leaderboard.bootstrap import check_level
from leaderboard.resampling import DEFAULT_SEED, Resamplable, Statistic, UnitStats, chunks, swap_masks

K = TypeVar("K", bound=Hashable)

METHOD = "paired approximate randomization, Holm-corrected"
#: Fewest trials of a permutation test.
MIN_TRIALS = 1000
#: Differences below this are float noise: the systems score the same.
SAME = 1e-12


@dataclass(frozen=True)
class PairedTest:
    """One paired permutation test: the observed difference (a - b) and its two-sided p-value."""

    difference: float
    p_value: float
    trials: int
    #: Trials on which the metric was undefined for a system (left out).
    undefined: int


@dataclass(frozen=True)
class Comparison(Generic[K]):
    """Is ``better`` (rank k) significantly better than ``worse`` (rank k+1)? ``p_value`` is Holm-corrected.

    ``p_value`` and ``p_raw`` are None when the pair could not be compared (see the module docstring).
    """

    better: K
    worse: K
    difference: float | None
    p_raw: float | None
    p_value: float | None
    significant: bool
    trials: int
    method: str = METHOD

    def to_dict(self) -> dict[str, Any]:
        return {
            "better": self.better,
            "worse": self.worse,
            "p_value": self.p_value,
            "significant": self.significant,
            "method": self.method,
        }


def trials_for(comparisons: int, level: float = 0.95) -> int:
    """Trials enough for Holm's smallest corrected p-value, at least m / (trials + 1), to reach 1 - level."""
    return max(MIN_TRIALS, math.ceil(4 * max(1, comparisons) / (1 - level)))


def paired_test(
    scorer: Resamplable,
    units_a: Mapping[str, UnitStats],
    units_b: Mapping[str, UnitStats],
    metric: str,
    *,
    trials: int = MIN_TRIALS,
    seed: int = DEFAULT_SEED,
    masks: NDArray[np.bool_] | None = None,
) -> PairedTest | None:
    """Approximate randomization of ``metric`` between two systems; None unless they share their units.

    ``masks`` (``swap_masks``) lets a board draw its coin flips once for all its pairs.
    """
    if not units_a or set(units_a) != set(units_b):
        return None
    ids = sorted(units_a)
    n = len(ids)
    statistic = Statistic.of_stats(scorer, [units_a[u] for u in ids] + [units_b[u] for u in ids], metric)
    keep = np.concatenate([np.ones(n), np.zeros(n)])
    observed = statistic(np.stack([keep, 1 - keep]))
    difference = float(observed[0] - observed[1])
    if math.isnan(difference):
        return None
    if masks is None or masks.shape != (trials, n):
        masks = swap_masks(n, trials, seed)
    differences = np.empty(trials)
    if statistic.weighted is not None:
        # Sums are linear in the weights: system a' takes b's row where a unit is swapped, so its sums are
        # a's total plus swapped @ (b - a), and b' has what is left of both totals: one product per trial.
        columns = statistic.weighted.columns
        rows_a, rows_b = columns[:n], columns[n:]
        total_a, total = rows_a.sum(axis=0), columns.sum(axis=0)
        step = rows_b - rows_a
        for rows in chunks(trials, n):
            as_a = total_a + masks[rows].astype(np.float64) @ step
            differences[rows] = statistic.finish(as_a) - statistic.finish(total - as_a)
    else:
        for rows in chunks(trials, 4 * n):
            swapped = masks[rows].astype(np.float64)
            as_a = np.hstack([1 - swapped, swapped])
            differences[rows] = statistic(as_a) - statistic(1 - as_a)
    defined = differences[~np.isnan(differences)]
    if abs(difference) <= SAME:
        p_value = 1.0
    else:
        hits = int(np.count_nonzero(np.abs(defined) >= abs(difference) - SAME))
        p_value = (1 + hits) / (1 + len(defined))
    return PairedTest(difference, p_value, trials, trials - len(defined))


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (None stays None and does not count as a test)."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(tested)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def compare_neighbours(
    scorer: Resamplable,
    entries: Sequence[tuple[K, Mapping[str, UnitStats] | None]],
    metric: str,
    *,
    level: float = 0.95,
    trials: int | None = None,
    seed: int = DEFAULT_SEED,
) -> list[Comparison[K]]:
    """Rank k against rank k+1 for each neighbour pair of ``entries`` (in board order: key, units)."""
    level = check_level(level)
    pairs = list(itertools.pairwise(entries))
    count = trials if trials is not None else trials_for(len(pairs), level)
    sizes = {len(units) for _, units in entries if units}
    shared = swap_masks(sizes.pop(), count, seed) if len(sizes) == 1 else None
    tests = [
        paired_test(scorer, a, b, metric, trials=count, seed=seed, masks=shared) if a and b else None
        for (_, a), (_, b) in pairs
    ]
    corrected = holm([t.p_value if t else None for t in tests])
    return [
        Comparison(
            better=first,
            worse=second,
            difference=test.difference if test else None,
            p_raw=test.p_value if test else None,
            p_value=p,
            significant=p is not None and p <= 1 - level,
            trials=count,
        )
        for ((first, _), (second, _)), test, p in zip(pairs, tests, corrected, strict=True)
    ]


def tied_groups(keys: Sequence[K], comparisons: Sequence[Comparison[K]]) -> list[list[K]]:
    """``keys`` (board order) cut into runs of statistically tied systems.

    A boundary falls between neighbours that are significantly different or that could not be compared.
    """
    tied = {(c.better, c.worse) for c in comparisons if c.p_value is not None and not c.significant}
    groups: list[list[K]] = []
    for key in keys:
        if groups and (groups[-1][-1], key) in tied:
            groups[-1].append(key)
        else:
            groups.append([key])
    return groups
