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
) -> PairedTest | None:
    """Approximate randomization of ``metric`` between two systems; None unless they share their units."""
    return paired_tests(scorer, [(units_a, units_b)], metric, trials=trials, seed=seed)[0]


@dataclass(frozen=True)
class _Pair:
    """Two systems' units side by side (a's, then b's, in the same unit order) and their observed difference."""

    statistic: Statistic
    difference: float

    @property
    def size(self) -> int:
        return self.statistic.size // 2


def _pair(
    scorer: Resamplable, units_a: Mapping[str, UnitStats] | None, units_b: Mapping[str, UnitStats] | None, metric: str
) -> _Pair | None:
    if not units_a or not units_b or set(units_a) != set(units_b):
        return None
    ids = sorted(units_a)
    # Scores a float holds may still differ by more than one holds (a scoring program's 1e308 against
    # -1.7e308): such a pair cannot be tested, like an undefined one, and must not stop the others.
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            statistic = Statistic.of_stats(scorer, [units_a[u] for u in ids] + [units_b[u] for u in ids], metric)
            keep = np.concatenate([np.ones(len(ids)), np.zeros(len(ids))])
            observed = statistic(np.stack([keep, 1 - keep]))
            difference = float(observed[0] - observed[1])
    except (OverflowError, FloatingPointError):
        return None
    return _Pair(statistic, difference) if math.isfinite(difference) else None


def paired_tests(
    scorer: Resamplable,
    pairs: Sequence[tuple[Mapping[str, UnitStats] | None, Mapping[str, UnitStats] | None]],
    metric: str,
    *,
    trials: int = MIN_TRIALS,
    seed: int = DEFAULT_SEED,
) -> list[PairedTest | None]:
    """``paired_test`` of each pair (None where a pair cannot be compared), with shared coin flips.

    Pairs of vectorized systems over the same number of units go through one matrix product per chunk of
    trials: the coin flips times every pair's (b - a) rows side by side, which costs far less than one
    product per pair because the flips are read once.
    """
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be a positive integer, not {trials!r}")
    prepared = [_pair(scorer, a, b, metric) for a, b in pairs]
    found = {i: p for i, p in enumerate(prepared) if p is not None}
    differences: dict[int, NDArray[np.float64]] = {}
    for size in sorted({p.size for p in found.values()}):
        masks = swap_masks(size, trials, seed)
        batch = {i: p for i, p in found.items() if p.size == size}
        with np.errstate(over="ignore", invalid="ignore"):  # a trial past a float's range counts as a hit
            differences.update(_linear_trials({i: p for i, p in batch.items() if p.statistic.weighted}, masks))
            differences.update({i: _looping_trials(p, masks) for i, p in batch.items() if i not in differences})
    out: list[PairedTest | None] = []
    for i, pair in enumerate(prepared):
        if pair is None:
            out.append(None)
            continue
        defined = differences[i][~np.isnan(differences[i])]
        if abs(pair.difference) <= SAME:
            p_value = 1.0
        else:
            hits = int(np.count_nonzero(np.abs(defined) >= abs(pair.difference) - SAME))
            p_value = (1 + hits) / (1 + len(defined))
        out.append(PairedTest(pair.difference, p_value, trials, trials - len(defined)))
    return out


def _linear_trials(pairs: Mapping[int, _Pair], masks: NDArray[np.bool_]) -> dict[int, NDArray[np.float64]]:
    """Trial differences of vectorized pairs. The sums are linear in the weights: system a' takes b's row
    where a unit is swapped, so its sums are a's total plus flips @ (b - a), and b' has the rest of both."""
    columns = {i: p.statistic.weighted.columns for i, p in pairs.items() if p.statistic.weighted is not None}
    if not columns:
        return {}
    n = next(iter(pairs.values())).size
    steps = np.hstack([c[n:] - c[:n] for c in columns.values()])
    bounds = dict(
        zip(columns, itertools.pairwise(np.cumsum([0] + [c.shape[1] for c in columns.values()])), strict=True)
    )
    out = {i: np.empty(len(masks)) for i in columns}
    for rows in chunks(len(masks), max(n, steps.shape[1])):
        moved = masks[rows].astype(np.float64) @ steps
        for i, c in columns.items():
            start, stop = bounds[i]
            as_a = c[:n].sum(axis=0) + moved[:, start:stop]
            finish = pairs[i].statistic.finish
            out[i][rows] = finish(as_a) - finish(c.sum(axis=0) - as_a)
    return out


def _looping_trials(pair: _Pair, masks: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Trial differences through ``aggregate`` (a scorer without the vectorized hook)."""
    out = np.empty(len(masks))
    for rows in chunks(len(masks), 4 * pair.size):
        swapped = masks[rows].astype(np.float64)
        as_a = np.hstack([1 - swapped, swapped])
        out[rows] = pair.statistic(as_a) - pair.statistic(1 - as_a)
    return out


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


def neighbour_tests(
    scorer: Resamplable,
    entries: Sequence[tuple[K, Mapping[str, UnitStats] | None]],
    metric: str,
    *,
    trials: int,
    seed: int = DEFAULT_SEED,
    known: Mapping[tuple[K, K], PairedTest | None] | None = None,
) -> list[PairedTest | None]:
    """The uncorrected test of each neighbour pair of ``entries`` (board order), those of ``known`` pairs
    (``(better, worse)`` keys, made with the same trials and seed) taken as they are: a pair is tested the same
    alone or among others, since every pair of one size shares the coin flips."""
    pairs = [(a, b) for (a, _), (b, _) in itertools.pairwise(entries)]
    units = [(a, b) for (_, a), (_, b) in itertools.pairwise(entries)]
    given = known or {}
    todo = [i for i, pair in enumerate(pairs) if pair not in given]
    fresh = paired_tests(scorer, [units[i] for i in todo], metric, trials=trials, seed=seed)
    out = [given.get(pair) for pair in pairs]
    for i, test in zip(todo, fresh, strict=True):
        out[i] = test
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
    count = trials if trials is not None else trials_for(max(0, len(entries) - 1), level)
    tests = neighbour_tests(scorer, entries, metric, trials=count, seed=seed)
    return corrected_comparisons([key for key, _ in entries], tests, trials=count, level=level)


def corrected_comparisons(
    keys: Sequence[K], tests: Sequence[PairedTest | None], *, trials: int, level: float = 0.95
) -> list[Comparison[K]]:
    """The comparisons of neighbours from their uncorrected ``tests`` (board order), Holm-corrected."""
    level = check_level(level)
    pairs = list(itertools.pairwise(keys))
    corrected = holm([t.p_value if t else None for t in tests])
    return [
        Comparison(
            better=first,
            worse=second,
            difference=test.difference if test else None,
            p_raw=test.p_value if test else None,
            p_value=p,
            significant=p is not None and p <= 1 - level,
            trials=trials,
        )
        for (first, second), test, p in zip(pairs, tests, corrected, strict=True)
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
