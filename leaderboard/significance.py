"""Paired comparisons between neighbours on a board, and the groups of systems the data cannot tell apart.

The test is a paired bootstrap test of equal means, on the units both systems were scored on: each replicate
draws the units with replacement (within the scorer's strata, ``leaderboard.resampling``) and gives both
systems the same draw, and the spread of the replicates' differences is the standard error of the observed
difference (a - b). The p-value is Student's two-sided, for that difference over its standard error, with the
small-sample correction of the intervals (``leaderboard.bootstrap``): the standard error times sqrt(n / (n - 1))
and n minus the number of strata degrees of freedom, or, with small strata, the pooled within-stratum spread
of ``leaderboard.strata``. On a difference of means it is the paired t-test (the tests check it against
``scipy.stats.ttest_rel``). It tests what a board claims, that one mean is higher than another, and only
that: unlike a randomization test (Noreen 1989), which this replaced, it does not assume the two systems
exchangeable, so a system with the same mean and noisier scores is not called different more often than the
level allows (``bench/coverage_bench.py`` measures it). Two identical systems differ by 0: p-value 1.

With ``TOO_FEW`` units or fewer (five documents) no comparison is made: no test can tell systems apart on so
little, and a board must say "too few to compare", not "tied" (``PairedTest.p_value`` is None then).

Between the k-1 neighbour pairs of a board of k, the p-values are corrected with Holm's step-down method
(Holm 1979), which holds the chance of any false "significantly better" on the board at 1 - level.

Groups, as the WMT findings papers cluster systems: a boundary is drawn below rank k when k is
significantly better than k+1; the runs between boundaries are the groups of statistically tied systems.
Only neighbours are tested, so a system may still differ significantly from one two places below it in
its group. A pair that cannot be compared (a system without unit statistics, different units, an
undefined metric, too few units) draws no conclusion and also draws a boundary: the board cannot claim them
tied.

Hand-written rather than ``scipy.stats.bootstrap``: its statistic would receive arrays, not the scorer's unit
statistics; it cannot keep strata, give two systems the same draws, or set aside replicates on which the
metric is undefined.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from leaderboard.bootstrap import TOO_FEW, check_level
from leaderboard.resampling import DEFAULT_SEED, Resamplable, Statistic, UnitStats, bootstrap_counts, chunks
from leaderboard.strata import pooling
from scorers.families.weighted import weighted_sums

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

K = TypeVar("K", bound=Hashable)

METHOD = "paired bootstrap test of equal means, Holm-corrected"
#: Bootstrap replicates of a paired test by default: the standard error within about 1.6% of its value.
REPLICATES = 2000
#: Differences below this are float noise: the systems score the same.
SAME = 1e-12


@dataclass(frozen=True)
class PairedTest:
    """One paired test: the observed difference (a - b) and its two-sided p-value (None: too few units)."""

    difference: float
    p_value: float | None
    trials: int
    #: Replicates on which the metric was undefined for a system (left out).
    undefined: int
    units: int = 0

    @property
    def too_few(self) -> bool:
        return self.p_value is None


@dataclass(frozen=True)
class Comparison(Generic[K]):
    """Is ``better`` (rank k) significantly better than ``worse`` (rank k+1)? ``p_value`` is Holm-corrected.

    ``p_value`` and ``p_raw`` are None when the pair could not be compared (see the module docstring);
    ``too_few`` says why when the reason is that the units are too few. ``selected_from`` is how many
    submissions the upper entry was the best of (its raw p-value is multiplied by it, ``board_uncertainty``).
    """

    better: K
    worse: K
    difference: float | None
    p_raw: float | None
    p_value: float | None
    significant: bool
    trials: int
    method: str = METHOD
    too_few: bool = False
    selected_from: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "better": self.better,
            "worse": self.worse,
            "p_value": self.p_value,
            "significant": self.significant,
            "too_few_units": self.too_few,
            "method": self.method,
        }


def paired_test(
    scorer: Resamplable,
    units_a: Mapping[str, UnitStats],
    units_b: Mapping[str, UnitStats],
    metric: str,
    *,
    trials: int = REPLICATES,
    seed: int = DEFAULT_SEED,
) -> PairedTest | None:
    """The paired bootstrap test of ``metric`` between two systems; None unless they share their units."""
    return paired_tests(scorer, [(units_a, units_b)], metric, trials=trials, seed=seed)[0]


@dataclass(frozen=True)
class _Pair:
    """Two systems' units side by side (a's, then b's, in the same unit order) and their observed difference."""

    statistic: Statistic
    difference: float
    #: Positions (among the n shared units) of each stratum, from a's units.
    strata: tuple[NDArray[np.intp], ...]

    @property
    def size(self) -> int:
        return self.statistic.size // 2

    def differences(self, weights: NDArray[Any]) -> NDArray[np.float64]:
        """a's metric minus b's, each unit weighted alike in both, per row of ``weights`` (replicates x n)."""
        import numpy as np

        n = self.size
        out = np.empty(len(weights))
        weighted = self.statistic.weighted
        for rows in chunks(len(weights), 2 * n):
            if weighted is not None:
                columns = weighted.columns
                k = columns.shape[1]
                # a's and b's columns side by side: one product of the replicates' weights for both systems
                sums = weighted_sums(weights[rows], np.hstack([columns[:n], columns[n:]]))
                out[rows] = self.statistic.finish(sums[:, :k]) - self.statistic.finish(sums[:, k:])
            else:
                part = np.asarray(weights[rows], dtype=np.float64)
                none = np.zeros_like(part)
                out[rows] = self.statistic(np.hstack([part, none])) - self.statistic(np.hstack([none, part]))
        return out

    def left_out(self) -> NDArray[np.float64]:
        """The difference with each unit left out of both systems (NaN for units alone in their stratum)."""
        import numpy as np

        n = self.size
        out = np.full(n, np.nan)
        movable = np.concatenate([p for p in self.strata if len(p) > 1] or [np.zeros(0, dtype=np.intp)])
        weighted = self.statistic.weighted
        if weighted is not None:  # linear sums: leaving unit i out subtracts its row from each system's total
            a, b = weighted.columns[:n], weighted.columns[n:]
            finish = self.statistic.finish
            out[movable] = finish(a.sum(axis=0) - a[movable]) - finish(b.sum(axis=0) - b[movable])
            return out
        weights = np.ones((len(movable), n))
        weights[np.arange(len(movable)), movable] = 0.0
        out[movable] = self.differences(weights)
        return out


def _pair(
    scorer: Resamplable, units_a: Mapping[str, UnitStats] | None, units_b: Mapping[str, UnitStats] | None, metric: str
) -> _Pair | None:
    if not units_a or not units_b or set(units_a) != set(units_b):
        return None
    import numpy as np

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
    if not math.isfinite(difference):
        return None
    groups: dict[Hashable, list[int]] = {}
    for position, unit_id in enumerate(ids):
        groups.setdefault(scorer.stratum(units_a[unit_id]), []).append(position)
    strata = tuple(np.asarray(groups[key], dtype=np.intp) for key in sorted(groups, key=repr))
    return _Pair(statistic, difference, strata)


def paired_tests(
    scorer: Resamplable,
    pairs: Sequence[tuple[Mapping[str, UnitStats] | None, Mapping[str, UnitStats] | None]],
    metric: str,
    *,
    trials: int = REPLICATES,
    seed: int = DEFAULT_SEED,
) -> list[PairedTest | None]:
    """``paired_test`` of each pair (None where a pair cannot be compared). Pairs with the same strata share
    their bootstrap draws, so a pair is tested the same alone or among others."""
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 2:
        raise ValueError(f"trials must be an integer of at least 2, not {trials!r}")
    import numpy as np

    drawn: dict[tuple[tuple[int, ...], ...], NDArray[np.int32]] = {}
    out: list[PairedTest | None] = []
    for pair in (_pair(scorer, a, b, metric) for a, b in pairs):
        if pair is None:
            out.append(None)
            continue
        if pair.size <= TOO_FEW:
            out.append(PairedTest(pair.difference, None, trials, 0, pair.size))
            continue
        if abs(pair.difference) <= SAME:
            out.append(PairedTest(pair.difference, 1.0, trials, 0, pair.size))
            continue
        key = tuple(tuple(int(i) for i in p) for p in pair.strata)
        if key not in drawn:
            drawn[key] = bootstrap_counts(pair.strata, trials, seed)
        with np.errstate(over="ignore", invalid="ignore"):  # a replicate past a float's range is undefined
            replicates = pair.differences(drawn[key])
            replicates[~np.isfinite(replicates)] = np.nan
            p_value = _p_value(pair, replicates[~np.isnan(replicates)], trials)
        out.append(PairedTest(pair.difference, p_value, trials, int(np.count_nonzero(np.isnan(replicates))), pair.size))
    return out


def _p_value(pair: _Pair, replicates: NDArray[np.float64], trials: int) -> float:
    """Student's two-sided p-value of the observed difference over its corrected bootstrap standard error."""
    import numpy as np
    from scipy.stats import t as student_t  # imported where used: scipy.stats costs every page's start

    if len(replicates) < 2:
        return 1.0
    se = float(np.std(replicates, ddof=1))
    pool = pooling(pair.left_out(), pair.strata) if len(pair.strata) > 1 else None
    if pool is not None and pool.applies:
        se, df = se * pool.factor, pool.df
    else:
        varying = [len(p) for p in pair.strata if len(p) > 1] or [pair.size]
        n = sum(varying) / len(varying)
        se, df = se * math.sqrt(n / (n - 1)), max(1, sum(varying) - len(varying))
    if se <= SAME * max(1.0, abs(pair.difference)):
        return 1 / (trials + 1)  # the same nonzero difference in every replicate
    return float(2 * student_t.sf(abs(pair.difference) / se, df))


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
    count = trials if trials is not None else REPLICATES
    tests = neighbour_tests(scorer, entries, metric, trials=count, seed=seed)
    return corrected_comparisons([key for key, _ in entries], tests, trials=count, level=level)


def corrected_comparisons(
    keys: Sequence[K],
    tests: Sequence[PairedTest | None],
    *,
    trials: int,
    level: float = 0.95,
    selected_from: Mapping[K, int] | None = None,
) -> list[Comparison[K]]:
    """The comparisons of neighbours from their uncorrected ``tests`` (board order), Holm-corrected.

    ``selected_from[key]`` (default 1) is how many submissions an entry was picked from as its best on the same
    units: a pair's raw p-value is multiplied by the upper entry's count before Holm's correction (Bonferroni
    over the submissions it could have been; see ``docs/STATISTICS.md``).
    """
    level = check_level(level)
    pairs = list(itertools.pairwise(keys))
    chosen = selected_from or {}
    counts = [max(1, chosen.get(first, 1)) for first, _ in pairs]
    raw = [min(1.0, t.p_value * k) if t and t.p_value is not None else None for t, k in zip(tests, counts, strict=True)]
    corrected = holm(raw)
    return [
        Comparison(
            better=first,
            worse=second,
            difference=test.difference if test else None,
            p_raw=test.p_value if test else None,
            p_value=p,
            significant=p is not None and p <= 1 - level,
            trials=trials,
            too_few=bool(test and test.too_few),
            selected_from=k,
        )
        for (first, second), test, p, k in zip(pairs, tests, corrected, counts, strict=True)
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
