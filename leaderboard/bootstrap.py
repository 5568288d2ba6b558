"""Bootstrap confidence intervals of a score, from its stored unit statistics.

Each replicate resamples the units with replacement, within the strata the scorer declares (SV-Ident:
per language, so every replicate averages the same languages as the score), and the scorer's own
aggregation computes the metric on it (``leaderboard.resampling``). Replicates on which the metric is
undefined (all denominators zero: a resample of only empty documents) are left out and counted, not
scored 0.

The default method is the *expanded BCa* interval. BCa (Efron 1987) corrects the percentile interval
for bias and skewness, using the jackknife for the acceleration (stratum by stratum, as Davison & Hinkley 1997
do for stratified samples). At the sizes phases have (6 to 30 documents) every bootstrap interval is too narrow,
because the resampled spread is the spread of the sample, short by a factor sqrt((n-1)/n), and normal
quantiles stand where Student's belong; the expansion (Hesterberg 2015, "What teachers should know
about the bootstrap") widens the nominal level so that its normal quantile becomes
sqrt(n/(n-1)) * t(n-1), which fades to nothing as n grows. With strata, n is the mean size of the
strata that vary and the t has n minus the number of strata degrees of freedom. The coverage test
(``tests/leaderboard/test_bootstrap_coverage.py``) measures this by simulation on per-document means and
micro F1: nominal 95% intervals covered 93% of the time at 6 documents, 94% at 10 and 94-95% at 30 with
this method, against 85-87%, 89-90% and 92-94% for plain percentile intervals.

Small strata (a language with one or three documents among thirty) are widened by the pooled within-stratum
variance (``leaderboard.strata``); an interval where that cannot be done says so (``small_strata_unreliable``).

Flags: an interval over fewer than ``FEW_UNITS`` units, and a zero-width one (one unit, identical units,
a perfect score on every unit), are marked so that a page can say the interval says little. An interval over
``TOO_FEW`` units or fewer is *rough*: measured by simulation, such intervals hold the true value 80-90% of the
time, not 95% (``bench/coverage_bench.py``), and pages label them so. A zero-width interval is no 95% interval
at all: every resample scored the same, and pages say that instead of showing ``[est, est]``.

Monte Carlo precision: ``mc_error`` is the standard error of the endpoints that comes from drawing a finite
number of replicates (the order-statistic estimate: half the distance between the replicate quantiles one
binomial standard error either side of the endpoint's level). Pages show the endpoints with no more decimals
than it supports (``endpoint_decimals``).

Selection: an entrant's interval under ``selection: best`` is of the best of its k submissions on the same
units, which is biased upward (the winner's curse). ``for_selection`` widens it to the Bonferroni level
``1 - (1 - level) / k``: the k submissions' intervals then hold their true values together with probability at
least ``level``, so the one the selection picked does too (simultaneous intervals cover after selection).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from leaderboard.resampling import DEFAULT_SEED, Resamplable, Statistic, UnitStats, bootstrap_counts, jackknife
from leaderboard.strata import pooling

if TYPE_CHECKING:
    from leaderboard.resampling import Array

METHODS = ("bca-expanded", "bca", "percentile-expanded", "percentile")
DEFAULT_METHOD = "bca-expanded"
#: Below this many units an interval is flagged: it rests on too few documents to say much.
FEW_UNITS = 20
#: An interval is left out when more than this share of its replicates is undefined.
MAX_UNDEFINED_SHARE = 0.5
#: Replicate spreads below this are float noise: the interval has zero width.
ZERO_WIDTH = 1e-12
#: At this many units or fewer an interval is rough (well below its nominal coverage) and no pair is compared.
TOO_FEW = 5


@dataclass(frozen=True)
class Interval:
    """A confidence interval of one metric; ``low``/``high`` are None when the metric is undefined."""

    estimate: float | None
    low: float | None
    high: float | None
    level: float
    method: str
    #: How many units (documents, groups) were resampled, and in how many strata.
    units: int
    strata: int
    replicates: int
    #: Replicates on which the metric was undefined (left out of the interval).
    undefined: int
    #: Strata of fewer than ``strata.MIN_STRATUM`` units, and whether the interval was widened for them
    #: (``pooled``) or could not be (``small_strata_unreliable``).
    small_strata: int = 0
    pooled: bool = False
    strata_unreliable: bool = False
    #: Monte Carlo standard error of the endpoints (None: not measured, as in intervals stored earlier).
    mc_error: float | None = None
    #: The interval was widened for the selection of the best of this many submissions (1: no selection).
    selected_from: int = 1

    @property
    def few_units(self) -> bool:
        return self.units < FEW_UNITS

    @property
    def too_few(self) -> bool:
        """So few units that the interval is rough: its coverage is well below its level."""
        return self.units <= TOO_FEW

    @property
    def zero_width(self) -> bool:
        return self.low is not None and self.low == self.high

    @property
    def notes(self) -> tuple[str, ...]:
        """Caveats: ``undefined`` (no interval), ``few_units``, ``too_few_units``, ``zero_width``,
        ``undefined_replicates``, ``small_strata`` (widened), ``small_strata_unreliable``, ``selected``."""
        out = []
        if self.low is None:
            out.append("undefined")
        if self.few_units:
            out.append("few_units")
        if self.too_few:
            out.append("too_few_units")
        if self.zero_width:
            out.append("zero_width")
        if self.undefined:
            out.append("undefined_replicates")
        if self.small_strata and self.pooled:
            out.append("small_strata")
        if self.strata_unreliable:
            out.append("small_strata_unreliable")
        if self.selected_from > 1:
            out.append("selected")
        return tuple(out)

    @property
    def reliable(self) -> bool:
        """The interval is what its level says (up to the documented approximations)."""
        return self.low is not None and not (self.too_few or self.zero_width or self.strata_unreliable)

    @property
    def label(self) -> str:
        """What the interval is, in words, for pages: its level, or why it is not one."""
        level = f"{round(self.level * 100)}%"
        if self.low is None:
            return "no interval: the metric is undefined on too many resamples"
        if self.zero_width:
            return f"zero width: every resample of the {self.units} units scored the same; no {level} interval"
        parts = []
        if self.too_few:
            parts.append(f"rough: from {self.units} units, such intervals hold the true score less often than {level}")
        else:
            parts.append(f"{level} interval")
        if self.small_strata and self.pooled:
            parts.append("widened for small strata (pooled within-stratum spread)")
        if self.strata_unreliable:
            parts.append(
                "a stratum too small to estimate its spread (one unit, or none larger to pool from): unreliable"
            )
        if self.selected_from > 1:
            parts.append(f"widened for the choice of the best of {self.selected_from} submissions")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data; ``from_dict`` reads it back."""
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "method": self.method,
            "units": self.units,
            "strata": self.strata,
            "replicates": self.replicates,
            "undefined": self.undefined,
            "small_strata": self.small_strata,
            "pooled": self.pooled,
            "strata_unreliable": self.strata_unreliable,
            "mc_error": self.mc_error,
            "selected_from": self.selected_from,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Interval:
        return cls(
            estimate=_optional(data["estimate"]),
            low=_optional(data["low"]),
            high=_optional(data["high"]),
            level=float(data["level"]),
            method=str(data["method"]),
            units=int(data["units"]),
            strata=int(data["strata"]),
            replicates=int(data["replicates"]),
            undefined=int(data["undefined"]),
            small_strata=int(data.get("small_strata", 0)),
            pooled=bool(data.get("pooled", False)),
            strata_unreliable=bool(data.get("strata_unreliable", False)),
            mc_error=_optional(data.get("mc_error")),
            selected_from=int(data.get("selected_from", 1)),
        )


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)


def check_level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        raise ValueError(f"level must be a number strictly between 0 and 1, not {level!r}")
    return float(level)


def bootstrap_interval(
    scorer: Resamplable,
    units: Mapping[str, UnitStats],
    metric: str,
    *,
    level: float = 0.95,
    replicates: int = 1000,
    seed: int = DEFAULT_SEED,
    method: str = DEFAULT_METHOD,
) -> Interval:
    """The ``level`` interval of ``metric`` over ``units`` (unit id -> the scorer's unit statistics)."""
    level = check_level(level)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    statistic = Statistic.of(scorer, units, metric)
    values = statistic(bootstrap_counts(statistic.strata, replicates, seed))
    return interval_of(statistic, values, level=level, method=method)


def interval_of(statistic: Statistic, values: Array, *, level: float, method: str, pool_small: bool = True) -> Interval:
    """The interval from the metric's bootstrap ``values`` (NaN: undefined replicates); ``pool_small=False`` leaves
    small strata as the bootstrap sees them (the method before pooling, kept for ``bench/coverage_bench.py``)."""
    import numpy as np
    from scipy.special import ndtr, ndtri

    estimate = statistic.estimate()
    defined = np.sort(values[~np.isnan(values)])
    undefined = len(values) - len(defined)
    varying = [len(p) for p in statistic.strata if len(p) > 1]
    expanded = method.endswith("-expanded")
    left_out = jackknife(statistic) if method.startswith("bca") or (expanded and len(statistic.strata) > 1) else None
    pool = pooling(left_out, statistic.strata) if pool_small and expanded and left_out is not None else None

    def result(low: float | None, high: float | None, mc_error: float | None = None) -> Interval:
        return Interval(
            None if math.isnan(estimate) else estimate,
            low,
            high,
            level,
            method,
            statistic.size,
            len(statistic.strata),
            len(values),
            undefined,
            small_strata=pool.small if pool else 0,
            pooled=bool(pool and pool.applies),
            strata_unreliable=bool(pool and pool.unreliable),
            mc_error=mc_error,
        )

    if math.isnan(estimate) or len(defined) == 0 or undefined > MAX_UNDEFINED_SHARE * len(values):
        return result(None, None)
    if float(defined.max() - defined.min()) <= ZERO_WIDTH * max(1.0, abs(estimate)):
        return result(estimate, estimate, 0.0)
    tail = (1 - level) / 2
    z = float(ndtri(1 - tail))
    factor = 1.0
    if pool is not None and pool.applies:
        # The pooled share of the small strata, and Student's quantile with the pooled degrees of freedom
        # (the factor already holds the (n - 1) / n the expansion would correct).
        z, factor = student_quantile(1 - tail, pool.df), pool.factor
    elif expanded and varying:
        z = expanded_quantile(tail, varying)
    if method.startswith("bca") and left_out is not None:
        bias = _bias(defined, estimate)
        acceleration = _acceleration(left_out, statistic)
        lows, highs = _bca_level(bias, acceleration, -z), _bca_level(bias, acceleration, z)
    else:
        lows, highs = float(ndtr(-z)), float(ndtr(z))
    low, high = (float(v) for v in np.quantile(defined, [lows, highs]))
    error = max(_endpoint_error(defined, lows), _endpoint_error(defined, highs))
    if factor != 1.0:
        low, high = estimate - factor * (estimate - low), estimate + factor * (high - estimate)
    return result(low, high, factor * error)


def _endpoint_error(values: Array, share: float) -> float:
    """Monte Carlo standard error of the ``share`` quantile of sorted ``values``: half the spread of the quantiles
    one binomial standard error either side (the order-statistic estimate)."""
    import numpy as np

    step = math.sqrt(max(share * (1 - share), 0.25 / len(values)) / len(values))
    below, above = np.quantile(values, [max(0.0, share - step), min(1.0, share + step)])
    return float(above - below) / 2


def endpoint_decimals(mc_error: float | None, *, scale: float = 100.0, most: int = 2) -> int:
    """Decimals to show an interval's endpoints with, in units of ``scale`` (100: percent): as many as ``most``,
    no more than half a unit of the last one covers the Monte Carlo error."""
    if mc_error is None:
        return most
    decimals = most
    while decimals > 0 and mc_error * scale > 0.5 * 10.0**-decimals:
        decimals -= 1
    return decimals


def for_selection(interval: Interval, chosen_from: int) -> Interval:
    """The interval of a submission picked as the best of ``chosen_from`` on the same units: its half-widths widened
    from the level's quantile to the Bonferroni level's, ``z(1 - tail / k) / z(1 - tail)`` (normal quantiles)."""
    if chosen_from <= 1 or interval.low is None or interval.high is None or interval.estimate is None:
        return interval
    from scipy.special import ndtri

    tail = (1 - interval.level) / 2
    factor = float(ndtri(1 - tail / chosen_from) / ndtri(1 - tail))
    estimate = interval.estimate
    return replace(
        interval,
        low=estimate - factor * (estimate - interval.low),
        high=estimate + factor * (interval.high - estimate),
        mc_error=None if interval.mc_error is None else factor * interval.mc_error,
        selected_from=chosen_from,
    )


def expanded_quantile(tail: float, strata_sizes: list[int]) -> float:
    """The normal quantile replacing ``z(1 - tail)``: sqrt(n/(n-1)) * t(1 - tail; df), n the mean stratum size."""
    n = sum(strata_sizes) / len(strata_sizes)
    df = sum(strata_sizes) - len(strata_sizes)
    return math.sqrt(n / (n - 1)) * student_quantile(1 - tail, df)


def student_quantile(q: float, df: float) -> float:
    """Student's t quantile: ``scipy.special.stdtrit``, the function ``scipy.stats.t.ppf`` calls for ``q`` in
    (0, 1). scipy.stats itself is not imported: it took about a second of a worker's first scoring (and, at
    module level, a third of the server's start) for this one quantile."""
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def _bias(values: Array, estimate: float) -> float:
    """BCa's z0: the normal quantile of the share of replicates below the estimate (ties count half)."""
    import numpy as np
    from scipy.special import ndtri

    below = float(np.count_nonzero(values < estimate)) + 0.5 * float(np.count_nonzero(values == estimate))
    share = min(max(below / len(values), 0.5 / len(values)), 1 - 0.5 / len(values))
    return float(ndtri(share))


def _acceleration(left_out: Array, statistic: Statistic) -> float:
    """BCa's acceleration from jackknife influence values, summed stratum by stratum."""
    import numpy as np

    cubes = squares = 0.0
    for positions in statistic.strata:
        values = left_out[positions]
        values = values[~np.isnan(values)]
        if len(values) < 2:
            continue
        n = len(values)
        influence = (n - 1) * (values.mean() - values)
        cubes += float(np.sum(influence**3)) / n**3
        squares += float(np.sum(influence**2)) / n**2
    return cubes / (6 * squares**1.5) if squares > 0 else 0.0


def _bca_level(bias: float, acceleration: float, z: float) -> float:
    from scipy.special import ndtr

    shifted = bias + z
    denominator = 1 - acceleration * shifted
    if denominator <= 0:  # beyond where BCa's transformation holds: the far end of the replicates
        return 1.0 if z > 0 else 0.0
    return float(ndtr(bias + shifted / denominator))
