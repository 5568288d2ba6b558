"""The uncertainty of a board ranked by ranks (``leaderboard.multi``: mean of ranks, rank of ranks).

An entry's score on such a board is its mean rank over the board's metrics, and a rank depends on every other
entry: it has no interval of its own unit by unit, so the whole board is resampled. Each bootstrap replicate draws
the board's units with replacement (within the scorer's strata, the same draws as the intervals of one metric,
``leaderboard.resampling``) and, on that draw, computes every entry's value of every metric through the scorer's
own aggregation, ranks the entries on each metric the board's way (fractional or competition ranks, a value the
replicate leaves undefined taking the last place, as a missing one does on the board) and takes each entry's mean
rank. From the replicates:

* each entry's interval is the percentile interval of its replicated mean ranks (the lower endpoint the
  replicates' lower quantile, the upper one the higher: both are mean ranks an entry can have);
* each neighbour pair (board order) is tested on the differences of their mean ranks on the same replicates:
  the two-sided p-value is twice the share of replicates in which the lower entry ranks no worse than the upper
  one (``(count + 1) / (replicates + 1)``, so never 0), then Holm-corrected over the board, and the board is cut
  into tied groups as a board of one metric is (``leaderboard.significance.tied_groups``).

The labels are those of any interval (``bootstrap.Interval``): at ``TOO_FEW`` units or fewer the interval is
rough and no pair is compared (the board has no tied groups and says the data are too few), under ``FEW_UNITS``
it is flagged, and one whose every replicate ranks the entry alike has zero width. Percentile intervals get no
small-sample expansion: a mean rank is bounded (the top entry cannot rank better than 1), which the percentile
interval respects and an expansion would not; ``docs/STATISTICS.md`` says what that costs.

The units resampled are those every entry with unit statistics was scored on; an entry without them (scored before
units were stored) keeps its stored values in every replicate and gets no interval. The point estimate shown is
the board's mean rank. Written by hand: no library ranks a board of many metrics on resampled units.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from leaderboard.bootstrap import TOO_FEW, ZERO_WIDTH, Interval
from leaderboard.resampling import Resamplable, Statistic, UnitStats, bootstrap_counts
from leaderboard.significance import PairedTest, corrected_comparisons, tied_groups
from leaderboard.uncertainty import LEVEL, BoardUncertainty

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

K = TypeVar("K", bound=Hashable)

#: Bootstrap replicates of a board ranked by ranks: each costs every entry's every metric once.
REPLICATES = 2000
METHOD = "percentile"
TEST_METHOD = "paired bootstrap of mean-rank differences, Holm-corrected"
#: What ``BoardUncertainty.metric`` names for such a board.
MEAN_RANK = "mean_rank"


def rank_matrix(values: NDArray[np.float64], higher_is_better: bool, method: str) -> NDArray[np.float64]:
    """Ranks (1 the best) of the entries (columns) in each replicate (rows) by ``scipy.stats.rankdata`` with
    ``method`` (``average`` or ``min``); an undefined value (NaN) takes the last place, the number of entries."""
    import numpy as np
    from scipy.stats import rankdata  # imported where used: scipy.stats is slow to import

    keyed = -values if higher_is_better else values
    ranks = np.asarray(rankdata(keyed, method=method, axis=1, nan_policy="omit"), dtype=np.float64)
    ranks[np.isnan(ranks)] = float(values.shape[1])
    return ranks


def replicated_mean_ranks(
    scorer: Resamplable,
    entries: Sequence[tuple[Mapping[str, float | None], Mapping[str, UnitStats] | None]],
    metrics: Sequence[str],
    higher_is_better: Mapping[str, bool],
    method: str,
    *,
    replicates: int,
    seed: int,
) -> tuple[NDArray[np.float64], int, int] | None:
    """Each entry's mean rank in each replicate (replicates x entries), the number of units resampled and of their
    strata; None
    where fewer than two units are shared by the entries with units. ``entries`` are (stored values, units)."""
    import numpy as np

    with_units = [units for _, units in entries if units]
    if not with_units:
        return None
    shared = sorted(set.intersection(*(set(units) for units in with_units)))
    if len(shared) < 2:
        return None
    strata = Statistic.of(scorer, {u: with_units[0][u] for u in shared}, metrics[0]).strata
    counts = bootstrap_counts(strata, replicates, seed)
    total = np.zeros((replicates, len(entries)))
    for metric in metrics:
        values = np.empty((replicates, len(entries)))
        for column, (stored, units) in enumerate(entries):
            if units:
                statistic = Statistic.of(scorer, {u: units[u] for u in shared}, metric)
                with np.errstate(over="ignore", invalid="ignore"):
                    values[:, column] = statistic(counts)
            else:
                value = stored.get(metric)
                values[:, column] = np.nan if value is None else value
        values[~np.isfinite(values)] = np.nan
        total += rank_matrix(values, higher_is_better.get(metric, True), method)
    return total / len(metrics), len(shared), len(strata)


def rank_uncertainty(
    scorer: Resamplable,
    entries: Sequence[tuple[K, float, Mapping[str, float | None], Mapping[str, UnitStats] | None]],
    metrics: Sequence[str],
    higher_is_better: Mapping[str, bool],
    method: str,
    *,
    seed: int,
    replicates: int = REPLICATES,
) -> BoardUncertainty[K] | None:
    """The intervals, neighbour comparisons and tied groups of a board ranked by the mean of ``method`` ranks
    (``average``: fractional, ``min``: competition). ``entries`` are in board order: (key, the board's mean rank,
    the stored values of the metrics, the units or None). None where the units cannot be resampled."""
    made = replicated_mean_ranks(
        scorer,
        [(values, units) for _, _, values, units in entries],
        metrics,
        higher_is_better,
        method,
        replicates=replicates,
        seed=seed,
    )
    if made is None:
        return None
    import numpy as np

    means, size, strata = made
    tail = (1 - LEVEL) / 2
    intervals: dict[K, Interval] = {}
    for column, (key, estimate, _, units) in enumerate(entries):
        if not units:
            continue
        spread = means[:, column]
        low = float(np.quantile(spread, tail, method="lower"))
        high = float(np.quantile(spread, 1 - tail, method="higher"))
        if float(spread.max() - spread.min()) <= ZERO_WIDTH:
            low = high = estimate
        intervals[key] = Interval(estimate, low, high, LEVEL, METHOD, size, strata, replicates, 0)
    keys = [key for key, *_ in entries]
    tests: list[PairedTest | None] = []
    for (upper, (_, above, _, units_a)), (lower, (_, below, _, units_b)) in itertools.pairwise(enumerate(entries)):
        if not units_a or not units_b:
            tests.append(None)
            continue
        difference = above - below
        if size <= TOO_FEW:
            tests.append(PairedTest(difference, None, replicates, 0, size))
            continue
        if abs(difference) <= ZERO_WIDTH:
            tests.append(PairedTest(difference, 1.0, replicates, 0, size))
            continue
        reversed_or_tied = int(np.count_nonzero(means[:, lower] <= means[:, upper]))
        p_value = min(1.0, 2 * (reversed_or_tied + 1) / (replicates + 1))
        tests.append(PairedTest(difference, p_value, replicates, 0, size))
    comparisons = [
        replace(c, method=TEST_METHOD) for c in corrected_comparisons(keys, tests, trials=replicates, level=LEVEL)
    ]
    groups = tied_groups(keys, comparisons)
    if comparisons and all(c.too_few for c in comparisons):
        groups = []  # nothing could be compared: no groups, rather than every entry alone
    return BoardUncertainty(
        MEAN_RANK,
        intervals,
        tuple(comparisons),
        tuple(tuple(g) for g in groups),
        computed=len(intervals),
        trials=replicates,
        tested=sum(1 for t in tests if t is not None),
    )
