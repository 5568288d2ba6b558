"""The uncertainty of a board ranked by ranks, against a computation by hand on a tiny board (fixed seed): the
units resampled alike for every entry, each metric's ranks recomputed on each resample, the mean rank's percentile
interval, the neighbour tests and their Holm correction; and too few units to compare."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pytest

from leaderboard.multi import BoardSpec, rank_board
from leaderboard.rank_uncertainty import MEAN_RANK, TEST_METHOD, rank_uncertainty
from leaderboard.ranking import Rules, rank
from leaderboard.resampling import UnitStats, bootstrap_counts
from tests.leaderboard.builders import make_candidate

SEED = 7
REPLICATES = 200
DIRECTIONS = {"x": True, "err": False}


class TwoMeans:
    """``x`` (higher is better) and ``err`` (lower is better): the means of the units' values, no strata, no
    vectorized form (every replicate goes through ``aggregate``)."""

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return {m: sum(float(s[m]) for s in stats) / len(stats) for m in ("x", "err")}

    def stratum(self, unit: UnitStats) -> None:
        return None

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> None:
        return None


#: Three systems on 8 documents: ada far ahead on both; bob and cy close, each ahead on one metric.
SYSTEMS = {
    "ada": ([0.9, 0.8, 0.95, 0.85, 0.9, 0.8, 0.9, 0.85], [0.1, 0.15, 0.1, 0.05, 0.1, 0.2, 0.1, 0.1]),
    "bob": ([0.6, 0.4, 0.7, 0.5, 0.3, 0.6, 0.5, 0.45], [0.3, 0.5, 0.2, 0.4, 0.35, 0.3, 0.45, 0.4]),
    "cy": ([0.5, 0.45, 0.6, 0.55, 0.4, 0.5, 0.6, 0.4], [0.4, 0.35, 0.3, 0.45, 0.3, 0.4, 0.35, 0.3]),
}


def _units(x: Sequence[float], err: Sequence[float]) -> dict[str, UnitStats]:
    return {f"d{i}": {"x": a, "err": b} for i, (a, b) in enumerate(zip(x, err, strict=True))}


def _board(
    size: int, ranking: str
) -> tuple[list[str], list[tuple[str, float, dict[str, float | None], dict[str, UnitStats]]]]:
    units = {team: _units(x[:size], err[:size]) for team, (x, err) in SYSTEMS.items()}
    candidates = [
        make_candidate(i, team, i, TwoMeans().aggregate(list(units[team].values()))) for i, team in enumerate(SYSTEMS)
    ]
    spec = BoardSpec("both", "Both", ("x", "err"), ranking=ranking)  # type: ignore[arg-type]
    rows = rank_board(spec, rank(candidates, Rules("x")), DIRECTIONS)
    teams = [row.entry.candidate.team for row in rows]
    return teams, [
        (row.entry.candidate.team, float(row.score or 0), dict(row.values), units[team])
        for row, team in zip(rows, teams, strict=True)
    ]


def _by_hand_ranks(values: list[float], higher_is_better: bool, fractional: bool) -> list[float]:
    """Ranks by sorting, by hand: fractional (ties share the mean place) or competition (ties share the best)."""
    out = []
    for v in values:
        better = sum(1 for w in values if (w > v if higher_is_better else w < v))
        same = sum(1 for w in values if w == v)
        out.append(better + (same + 1) / 2 if fractional else better + 1)
    return out


@pytest.mark.parametrize("ranking", ["mean_of_ranks", "rank_of_ranks"])
def test_mean_rank_intervals_and_groups_by_hand(ranking: str) -> None:
    teams, entries = _board(8, ranking)
    assert teams == ["ada", "bob", "cy"]  # x: ada, bob (.5625), cy (.5); err: ada, cy (.356), bob (.3625)
    board = rank_uncertainty(
        TwoMeans(),
        entries,
        ("x", "err"),
        DIRECTIONS,
        "average" if ranking == "mean_of_ranks" else "min",
        seed=SEED,
        replicates=REPLICATES,
    )
    assert board is not None and board.metric == MEAN_RANK

    # By hand: the same draws (units in sorted id order, one stratum), each replicate's means, ranks and mean rank.
    counts = bootstrap_counts([np.arange(8)], REPLICATES, SEED)
    ids = sorted(entries[0][3])
    means = {team: [] for team in teams}  # type: dict[str, list[float]]
    for row in counts:
        metrics = {
            team: {m: sum(c * units[u][m] for c, u in zip(row, ids, strict=True)) / sum(row) for m in ("x", "err")}
            for team, _, _, units in entries
        }
        per_metric = [
            _by_hand_ranks([metrics[t][m] for t in teams], DIRECTIONS[m], ranking == "mean_of_ranks")
            for m in ("x", "err")
        ]
        for i, team in enumerate(teams):
            means[team].append(sum(r[i] for r in per_metric) / 2)
    for team, estimate, _, _ in entries:
        interval = board.intervals[team]
        spread = sorted(means[team])
        # The 2.5% quantile's lower order statistic and the 97.5% quantile's higher one (of 200: the 5th, the 196th).
        assert (interval.low, interval.high) == (spread[4], spread[195])
        assert interval.estimate == estimate and interval.units == 8 and interval.method == "percentile"
    raw = []
    for upper, lower in itertools.pairwise(teams):
        reversed_or_tied = sum(1 for a, b in zip(means[upper], means[lower], strict=True) if b <= a)
        raw.append(min(1.0, 2 * (reversed_or_tied + 1) / (REPLICATES + 1)))
    # Holm by hand over the two pairs.
    first, second = sorted(range(2), key=lambda i: raw[i])
    holm = [0.0, 0.0]
    holm[first] = min(1.0, 2 * raw[first])
    holm[second] = max(holm[first], min(1.0, raw[second]))
    assert [c.p_value for c in board.comparisons] == pytest.approx(holm)
    assert all(c.method == TEST_METHOD for c in board.comparisons)
    # ada is ahead on both metrics in nearly every resample; bob and cy trade places.
    assert board.comparisons[0].significant and not board.comparisons[1].significant
    assert board.groups == (("ada",), ("bob", "cy"))
    assert board.intervals["ada"].high < board.intervals["bob"].low or board.intervals["ada"].zero_width


def test_five_units_are_too_few_to_compare() -> None:
    _, entries = _board(5, "mean_of_ranks")
    board = rank_uncertainty(TwoMeans(), entries, ("x", "err"), DIRECTIONS, "average", seed=SEED, replicates=REPLICATES)
    assert board is not None
    assert not board.comparable and board.groups == ()
    assert all(c.too_few and c.p_value is None for c in board.comparisons)
    assert all(i.too_few and not i.reliable for i in board.intervals.values())
    assert board.intervals["bob"].label.startswith("rough: from 5 units")


def test_an_entry_without_units_keeps_its_values_and_gets_no_interval() -> None:
    _, entries = _board(8, "mean_of_ranks")
    team, score, values, _ = entries[2]
    kept = [*entries[:2], (team, score, values, None)]
    board = rank_uncertainty(TwoMeans(), kept, ("x", "err"), DIRECTIONS, "average", seed=SEED, replicates=REPLICATES)
    assert board is not None and set(board.intervals) == {"ada", "bob"}
    assert board.comparisons[1].p_value is None  # bob against an entry that cannot be resampled: no conclusion
    # No units anywhere: nothing to resample.
    assert (
        rank_uncertainty(
            TwoMeans(), [(t, s, v, None) for t, s, v, _ in entries], ("x", "err"), DIRECTIONS, "average", seed=SEED
        )
        is None
    )
