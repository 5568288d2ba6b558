"""Bootstrap confidence intervals: resample a score's units with replacement and re-aggregate.

A unit is what the scorer's ``unit_stats`` returns one mapping for (a document, or a
(language, document) group for SV-Ident); the stored ``ScoreReport.units`` is enough, so an interval
never needs the files again. Each resample draws as many units as there are, with replacement, and
the scorer's own ``aggregate`` computes the metric on it, so the task's averaging (micro counts,
mean over documents then languages) is kept. The interval is the percentile interval of those
values (numpy's default linear interpolation).

Determinism: unit ids are sorted before drawing and numpy's ``Generator`` is seeded, so the same
units, seed and sample count give the same interval whatever the order of the stored mapping.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

UnitStats = Mapping[str, Any]
Aggregate = Callable[[Sequence[UnitStats]], Mapping[str, float]]

DEFAULT_SEED = 20240501


def _strata_indices(ids: Sequence[str], strata: Callable[[str], Hashable] | None) -> list[np.ndarray[Any, Any]]:
    """Positions of the units per stratum (one stratum of everything without ``strata``)."""
    if strata is None:
        return [np.arange(len(ids))]
    groups: dict[Hashable, list[int]] = {}
    for position, unit_id in enumerate(ids):
        groups.setdefault(strata(unit_id), []).append(position)
    return [np.asarray(positions) for positions in groups.values()]


def bootstrap_values(
    scorer_aggregate: Aggregate,
    units: Mapping[str, UnitStats],
    metric: str,
    samples: int = 1000,
    seed: int = DEFAULT_SEED,
    strata: Callable[[str], Hashable] | None = None,
) -> list[float]:
    """The metric on each of ``samples`` resamples of ``units`` (see ``bootstrap_interval``)."""
    if not units:
        raise ValueError("cannot bootstrap a score without units (the stored score has no per-unit statistics)")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples must be a positive integer, not {samples!r}")
    ids = sorted(units)
    stats = [units[unit_id] for unit_id in ids]
    groups = _strata_indices(ids, strata)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(samples):
        # Each stratum keeps its size, so every language (say) stays in every resample.
        drawn = np.concatenate([rng.choice(group, size=len(group), replace=True) for group in groups])
        result = scorer_aggregate([stats[i] for i in drawn])
        if metric not in result:
            known = ", ".join(sorted(result)) or "none"
            raise KeyError(f"the aggregate has no metric {metric!r} (it has: {known})")
        value = float(result[metric])
        if not math.isfinite(value):
            raise ValueError(f"metric {metric!r} is {value} on a resample; an interval needs finite values")
        values.append(value)
    return values


def bootstrap_interval(
    scorer_aggregate: Aggregate,
    units: Mapping[str, UnitStats],
    metric: str,
    samples: int = 1000,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
    strata: Callable[[str], Hashable] | None = None,
) -> tuple[float, float]:
    """The ``confidence`` percentile interval ``(low, high)`` of ``metric`` over unit resamples.

    ``strata`` maps a unit id to a group to resample within (``lambda u: u.split("/")[0]`` keeps the
    number of documents per language of SV-Ident fixed); without it all units are drawn together.
    """
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a number strictly between 0 and 1, not {confidence!r}")
    values = bootstrap_values(scorer_aggregate, units, metric, samples, seed, strata)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)
