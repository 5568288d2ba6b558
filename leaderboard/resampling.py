"""Replicates of a score's units, and one metric evaluated on many of them at once.

A unit is what a scorer's ``unit_stats`` returns one mapping for (a document, or an SV-Ident
(language, document) group); the stored ``ScoreReport.units`` are enough, so intervals and comparisons
never need the files again. A replicate is a weighting of the units, ``weights[r, i]`` being how often unit
``i`` counts in replicate ``r``: a bootstrap resample (counts drawn with replacement, within each stratum
the scorer declares), or a jackknife leave-one-out (one count set to 0); a paired test gives two systems the
same bootstrap counts.

``Statistic`` evaluates a metric on a weight matrix through the scorer's own aggregation: the scorer's
``weighted_metric`` hook (matrix products, ``scorers.families.weighted``) when it has one, else a loop
calling ``aggregate`` on each replicate's units repeated (the generic fallback, about a second per thousand
replicates of 3,000 units). A replicate whose metric is undefined is NaN: the hook says so when every
denominator is zero; through ``aggregate`` only a non-finite value can say it.

Reproducible: units are put in sorted id order and strata in sorted order before anything is drawn, and
every draw comes from numpy's ``Generator`` seeded with the phase's seed (``seed_for``) and a stream number,
so the same units give the same replicates in every process, and every submission of a phase (same units)
is resampled with the same replicates, which is what makes comparisons between them paired.

Hand-written rather than ``scipy.stats.bootstrap``: that function has no strata, draws afresh for every
call (so two systems are not resampled alike), and cannot set undefined replicates apart.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from scorers.families.weighted import weighted_sums

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Array: TypeAlias = NDArray[np.float64]

UnitStats = Mapping[str, Any]

#: Seed of callers that give none (the app derives one per phase with ``seed_for``).
DEFAULT_SEED = 20240501
#: The random stream of bootstrap counts within a seed (other draws of a seed would take other numbers).
BOOTSTRAP_STREAM = 1
#: Weight cells evaluated at once (16 MB of float64): bounds memory at any number of units.
CHUNK_CELLS = 1 << 21


class Weighted(Protocol):
    """A metric as ``finish(weights @ columns)`` (``scorers.families.weighted.WeightedMetric``)."""

    @property
    def columns(self) -> Array: ...

    @property
    def finish(self) -> Callable[[Array], Array]: ...


class Resamplable(Protocol):
    """What resampling needs of a scorer (``scorers.base.Scorer`` has all three)."""

    def aggregate(self, stats: Sequence[UnitStats]) -> Mapping[str, float]: ...

    def stratum(self, unit: UnitStats) -> Hashable | None: ...

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> Weighted | None: ...


def seed_for(*parts: object) -> int:
    """A 63-bit seed from names (competition, task, phase): the same in every process, unlike ``hash``."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def chunks(rows: int, columns: int) -> Iterator[slice]:
    """Row slices of a (rows x columns) weight matrix that fit in ``CHUNK_CELLS`` cells."""
    step = max(1, CHUNK_CELLS // max(1, columns))
    for start in range(0, rows, step):
        yield slice(start, min(rows, start + step))


@dataclass(frozen=True)
class Statistic:
    """One metric of one system's units, in a fixed unit order, evaluable on weight matrices.

    ``weighted`` is the scorer's vectorized form, or None when every replicate goes through ``aggregate``.
    """

    metric: str
    stats: tuple[UnitStats, ...]
    #: Positions of the units of each stratum (one part holding everything without strata).
    strata: tuple[NDArray[np.intp], ...]
    weighted: Weighted | None
    scorer: Resamplable

    @classmethod
    def of(cls, scorer: Resamplable, units: Mapping[str, UnitStats], metric: str) -> Statistic:
        """The metric over ``units`` (keyed by unit id), units in sorted id order."""
        if not units:
            raise ValueError("cannot resample a score without units (the stored score has no per-unit statistics)")
        return cls.of_stats(scorer, [units[unit_id] for unit_id in sorted(units)], metric)

    @classmethod
    def of_stats(cls, scorer: Resamplable, stats: Sequence[UnitStats], metric: str) -> Statistic:
        """The metric over ``stats`` in the order given."""
        import numpy as np

        whole = scorer.aggregate(stats)
        if metric not in whole:
            known = ", ".join(sorted(whole)) or "none"
            raise KeyError(f"the aggregate has no metric {metric!r} (it has: {known})")
        groups: dict[Hashable, list[int]] = {}
        for position, unit in enumerate(stats):
            groups.setdefault(scorer.stratum(unit), []).append(position)
        ordered = tuple(np.asarray(groups[key], dtype=np.intp) for key in sorted(groups, key=repr))
        return cls(metric, tuple(stats), ordered, scorer.weighted_metric(stats, metric), scorer)

    @property
    def size(self) -> int:
        return len(self.stats)

    def __call__(self, weights: Array | NDArray[Any]) -> Array:
        """The metric on each row of ``weights`` (NaN where undefined), chunk by chunk."""
        import numpy as np

        matrix = np.atleast_2d(weights)
        if matrix.shape[1] != self.size:
            raise ValueError(f"weights have {matrix.shape[1]} columns for {self.size} units")
        if self.weighted is not None:
            return self.finish(self.sums(matrix))
        out = np.empty(len(matrix))
        for row, counts in enumerate(matrix):
            drawn = np.repeat(np.arange(self.size), np.asarray(counts, dtype=np.int64))
            value = float(self.scorer.aggregate([self.stats[i] for i in drawn])[self.metric])
            out[row] = value if math.isfinite(value) else np.nan
        return out

    def sums(self, weights: Array | NDArray[Any]) -> Array:
        """``weights @ columns`` of the vectorized form, chunk by chunk (it must exist), as ``weighted_sums`` gives
        it: the same floats on every machine."""
        import numpy as np

        if self.weighted is None:
            raise TypeError(f"the metric {self.metric!r} has no vectorized form")
        columns = self.weighted.columns
        out = np.empty((len(weights), columns.shape[1]))
        for rows in chunks(len(weights), self.size):
            out[rows] = weighted_sums(weights[rows], columns)  # the same floats on every machine
        return out

    def finish(self, sums: Array) -> Array:
        """The metric from ``sums`` of the vectorized form (it must exist)."""
        if self.weighted is None:
            raise TypeError(f"the metric {self.metric!r} has no vectorized form")
        return self.weighted.finish(sums)

    def estimate(self) -> float:
        """The metric on all units once each (NaN if undefined)."""
        import numpy as np

        return float(self(np.ones((1, self.size)))[0])


def bootstrap_counts(strata: Sequence[NDArray[np.intp]], replicates: int, seed: int) -> NDArray[np.int32]:
    """(replicates x units) counts: each stratum's units drawn with replacement, as many as it has."""
    import numpy as np

    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise ValueError(f"replicates must be a positive integer, not {replicates!r}")
    size = sum(len(positions) for positions in strata)
    counts = np.zeros((replicates, size), dtype=np.int32)
    rng = np.random.default_rng([seed, BOOTSTRAP_STREAM])
    offsets = np.arange(replicates)[:, None]
    for positions in strata:
        m = len(positions)
        drawn = rng.integers(0, m, size=(replicates, m))
        per_row = np.bincount((drawn + offsets * m).ravel(), minlength=replicates * m).reshape(replicates, m)
        counts[:, positions] = per_row
    return counts


def jackknife(statistic: Statistic) -> Array:
    """The metric with each unit left out once (NaN for units alone in their stratum: they never vary)."""
    import numpy as np

    n = statistic.size
    out = np.full(n, np.nan)
    movable = np.concatenate([p for p in statistic.strata if len(p) > 1] or [np.zeros(0, dtype=np.intp)])
    if statistic.weighted is not None:
        # The sums are linear in the weights: leaving unit i out subtracts its row from the total.
        columns = statistic.weighted.columns
        out[movable] = statistic.finish(columns.sum(axis=0) - columns[movable])
        return out
    for rows in chunks(len(movable), n):
        left_out = movable[rows]
        weights = np.ones((len(left_out), n))
        weights[np.arange(len(left_out)), left_out] = 0.0
        out[left_out] = statistic(weights)
    return out
