"""A board's uncertainty: each entry's interval of the primary metric, its neighbour comparisons and the
groups of statistically tied systems, from the entries' stored unit statistics.

An interval stored with the score (computed once, when the submission was scored) is taken as it is; an
entry without one (scored before intervals were stored) gets one computed here from its units, with the
same seed, so both ways give the same numbers. Comparisons need both systems' units: each neighbour pair
is tested here (``neighbour_tests``) unless its test is given (a caller may keep the tests of pairs whose
scores did not change: a pair's test depends only on its two systems, the seed and the number of trials),
then all are Holm-corrected over the board and cut into ``tied_groups``. The number of bootstrap replicates
of a test is ``board_trials``, the same for every board, so that kept tests stay usable.

Selection: under ``selection: best`` an entry is the best of its team's k scored submissions on the same units.
``selected`` gives k per entry: its interval is widened to the Bonferroni level (``bootstrap.for_selection``)
and its comparison with the entry below has its raw p-value multiplied by k before Holm's correction.

Too few units: where no neighbour pair could be compared because the units are ``TOO_FEW`` or fewer, the
board has no tied groups at all (``comparable`` is False) and pages say the data are too few to compare.

Keys are whatever identifies an entry to the caller (the application uses submission ids).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from leaderboard.bootstrap import DEFAULT_METHOD, Interval, bootstrap_interval, for_selection
from leaderboard.resampling import Resamplable, UnitStats, seed_for
from leaderboard.significance import (
    METHOD,
    Comparison,
    PairedTest,
    corrected_comparisons,
    neighbour_tests,
    tied_groups,
)
from leaderboard.significance import REPLICATES as TEST_REPLICATES

K = TypeVar("K", bound=Hashable)

LEVEL = 0.95
#: Bootstrap replicates of an interval: the endpoints' Monte Carlo error about 0.04 of the standard error, so
#: an interval whose score varies by a point shows one decimal in percent (``bench/RESULTS.md``, the cost).
REPLICATES = 4000


def board_trials(pairs: int) -> int:
    """Bootstrap replicates of each neighbour test, whatever the board's size (``pairs``): the p-value comes from
    the replicates' standard error, not from counting them, so it needs no more as the board grows."""
    return TEST_REPLICATES


def phase_seed(competition: str, task: str, phase: str) -> int:
    """A phase's resampling seed, from its slugs: the scoring job and the board use the same one."""
    return seed_for(competition, task, phase)


def interval_for(scorer: Resamplable, units: Mapping[str, UnitStats], metric: str, *, seed: int) -> Interval | None:
    """The board's interval of ``metric`` over ``units`` (None without units): what a score stores."""
    if not units:
        return None
    return bootstrap_interval(scorer, units, metric, level=LEVEL, replicates=REPLICATES, seed=seed)


def stored_interval(data: Mapping[str, Any] | None, metric: str) -> Interval | None:
    """A stored interval (``{"metric", **Interval.to_dict()}``) if it is one of ``metric`` made the board's way."""
    if not data or data.get("metric") != metric:
        return None
    try:
        interval = Interval.from_dict(data)
    except (KeyError, TypeError, ValueError):
        return None
    same_way = (interval.level, interval.method, interval.replicates) == (LEVEL, DEFAULT_METHOD, REPLICATES)
    return interval if same_way else None


def interval_view(interval: Interval) -> dict[str, Any]:
    """What boards and the API show of an interval: ``{"low", "high", "level", "method", "units", "few_units",
    "zero_width", "too_few_units", "reliable", "label", "notes", "mc_error", "selected_from"}``."""
    return {
        "low": interval.low,
        "high": interval.high,
        "level": interval.level,
        "method": interval.method,
        "units": interval.units,
        "few_units": interval.few_units,
        "zero_width": interval.zero_width,
        "too_few_units": interval.too_few,
        "reliable": interval.reliable,
        "label": interval.label,
        "notes": list(interval.notes),
        "mc_error": interval.mc_error,
        "selected_from": interval.selected_from,
    }


def interval_record(interval: Interval | None, metric: str) -> dict[str, Any] | None:
    """What a score stores of its interval (plain JSON data; ``stored_interval`` reads it back)."""
    return None if interval is None else {"metric": metric, **interval.to_dict()}


@dataclass(frozen=True)
class BoardUncertainty(Generic[K]):
    """Intervals by entry, comparisons of neighbours (board order) and tied groups (board order)."""

    metric: str
    intervals: Mapping[K, Interval]
    comparisons: tuple[Comparison[K], ...]
    groups: tuple[tuple[K, ...], ...]
    #: Entries whose interval was computed here, not read from their score.
    computed: int = 0
    #: The uncorrected test of each neighbour pair (``(better, worse)``), to keep for the next board.
    tests: Mapping[tuple[K, K], PairedTest | None] = field(default_factory=dict)
    trials: int = 0
    #: Pairs tested here (not given).
    tested: int = 0
    #: The intervals computed here as a score would store them (before any widening for selection).
    fresh: Mapping[K, Interval] = field(default_factory=dict)

    @property
    def method(self) -> str:
        return METHOD

    @property
    def few_units(self) -> bool:
        """Some interval rests on fewer than ``FEW_UNITS`` units."""
        return any(i.few_units for i in self.intervals.values())

    @property
    def too_few(self) -> bool:
        """Some neighbour pair could not be compared because its units are too few."""
        return any(c.too_few for c in self.comparisons)

    @property
    def comparable(self) -> bool:
        """The board has tied groups: some pair was compared, or there is one entry."""
        return bool(self.groups)

    @property
    def unreliable(self) -> bool:
        """Some interval is not what its level says (rough, zero width, small strata not pooled)."""
        return any(not i.reliable for i in self.intervals.values())

    def group_of(self, key: K) -> int | None:
        """The entry's group number, 1 for the top group."""
        return next((n for n, group in enumerate(self.groups, start=1) if key in group), None)

    def interval_dict(self, key: K) -> dict[str, Any] | None:
        """``{"low", "high", "level", "method", "units", "few_units", "zero_width"}`` of the entry's interval."""
        interval = self.intervals.get(key)
        return None if interval is None else interval_view(interval)


def board_uncertainty(
    scorer: Resamplable,
    entries: Sequence[tuple[K, Mapping[str, UnitStats] | None]],
    metric: str,
    *,
    seed: int,
    stored: Mapping[K, Interval] | None = None,
    known_tests: Mapping[tuple[K, K], PairedTest | None] | None = None,
    selected: Mapping[K, int] | None = None,
) -> BoardUncertainty[K]:
    """The uncertainty of a board whose ``entries`` are (key, units) in board order.

    ``stored`` intervals and ``known_tests`` (made with ``board_trials`` of this board and ``seed``) are taken
    as they are; an entry's units are needed only for what is not given. ``selected`` is how many submissions
    each entry was picked from as the best (see the module docstring); ``intervals`` hold the widened ones.
    """
    chosen = selected or {}
    known = stored or {}
    intervals: dict[K, Interval] = {}
    fresh: dict[K, Interval] = {}
    computed = 0
    for key, units in entries:
        interval = known.get(key)
        if interval is None and units:
            interval = interval_for(scorer, units, metric, seed=seed)
            computed += 1
            if interval is not None:
                fresh[key] = interval
        if interval is not None:
            intervals[key] = for_selection(interval, chosen.get(key, 1))
    keys = [key for key, _ in entries]
    trials = board_trials(max(0, len(entries) - 1))
    given = known_tests or {}
    tests = neighbour_tests(scorer, entries, metric, trials=trials, seed=seed, known=given)
    pairs = list(itertools.pairwise(keys))
    comparisons = corrected_comparisons(keys, tests, trials=trials, level=LEVEL, selected_from=chosen)
    groups = tied_groups(keys, comparisons)
    if comparisons and all(c.too_few for c in comparisons):
        groups = []  # nothing could be compared: no groups, rather than every entry alone
    return BoardUncertainty(
        metric,
        intervals,
        tuple(comparisons),
        tuple(tuple(g) for g in groups),
        computed,
        tests=dict(zip(pairs, tests, strict=True)),
        trials=trials,
        tested=sum(1 for pair in pairs if pair not in given),
        fresh=fresh,
    )
