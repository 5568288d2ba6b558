"""Small strata: the variance a stratified bootstrap cannot see, imputed from the strata that can show it.

A stratified bootstrap resamples each stratum within itself (``leaderboard.resampling``). A stratum of one
unit is the same in every replicate, so its share of the score's variance is 0 in the interval; a stratum of
two or three units shows a share much smaller than its true one (the bootstrap's spread of n units is short by
(n - 1) / n) and a lumpy one. With 29 + 1 (language, document) groups averaged per language, the singleton
language carries most of the variance of the score and a nominal 95% interval held the true value about a
quarter of the time (``bench/coverage_bench.py``).

The method, *pooled within-stratum variance* (the survey statistician's remedy for strata of one unit,
Wolter 2007, *Introduction to Variance Estimation*, sec. 2.5; ``lonely.psu = "average"`` of R's survey
package, applied to units rather than strata): strata are the parts a score is averaged over with equal weight
(the contract of ``Scorer.stratum``), so a stratum's share of the variance is ``c * s_h^2 / n_h`` with the
same ``c`` for every stratum. The stratified jackknife gives each stratum's share ``V_h``; the strata of at
least ``MIN_STRATUM`` units give the pooled per-unit spread ``n_h V_h`` (weighted by their degrees of
freedom), and a small stratum's share is taken as the larger of its own ``V_h`` and the pooled spread over its
``n_h``. The interval's half-widths are then scaled by ``sqrt(V_target / V_boot)``, where ``V_boot`` is what the
stratified bootstrap's variance estimates (each share times ``(n_h - 1) / n_h``), and the quantile is
Student's with the pooled degrees of freedom. The assumption, stated on the page: units spread alike in every
stratum. Where no stratum is large enough to pool from, nothing can be imputed, and where a stratum has a single
unit the score's error is mostly that unit's (not normal): both stay flagged as unreliable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from leaderboard.resampling import Array, Statistic

#: Strata with fewer units than this are small: their share of the variance is imputed.
MIN_STRATUM = 5


@dataclass(frozen=True)
class Pooling:
    """How small strata change an interval: the half-widths' ``factor``, Student's ``df``; ``small`` strata."""

    factor: float
    df: int
    small: int
    #: The interval stays unreliable: no stratum was large enough to pool from, or a stratum has a single unit
    #: (widened, such intervals still held the true value only about 90% of the time: the score's error is
    #: then mostly one unit's, whose spread is not normal).
    unreliable: bool
    #: The half-widths are widened (there are small strata and a large one to pool from).
    applies: bool = False


def shares(left_out: Array, strata: tuple[np.ndarray, ...]) -> list[tuple[int, float]]:
    """Each stratum's size and jackknife share of the variance, ``(n - 1) / n * sum((t_i - mean)^2)``."""
    import numpy as np

    out = []
    for positions in strata:
        n = len(positions)
        values = left_out[positions]
        values = values[~np.isnan(values)]
        share = float((n - 1) / n * np.sum((values - values.mean()) ** 2)) if len(values) > 1 else 0.0
        out.append((n, share))
    return out


def pooling(left_out: Array, strata: tuple[np.ndarray, ...]) -> Pooling:
    """The widening of an interval whose statistic has these strata, from its jackknife ``left_out`` values."""
    sized = shares(left_out, strata)
    small = [(n, v) for n, v in sized if n < MIN_STRATUM]
    large = [(n, v) for n, v in sized if n >= MIN_STRATUM]
    if len(sized) < 2 or not small:
        return Pooling(1.0, max(1, sum(n - 1 for n, _ in sized)), 0, False)
    if not large:
        return Pooling(1.0, max(1, sum(n - 1 for n, _ in sized)), len(small), True)
    lone = any(n == 1 for n, _ in small)
    spread = sum((n - 1) * n * v for n, v in large) / sum(n - 1 for n, _ in large)
    target = sum(v for _, v in large) + sum(max(v, spread / n) for n, v in small)
    seen = sum((n - 1) / n * v for n, v in sized)
    df = sum(n - 1 for n, _ in large) + sum(n - 1 for n, _ in small)
    if seen <= 0:
        return Pooling(1.0, df, len(small), lone or target > 0)
    import numpy as np

    return Pooling(float(np.sqrt(target / seen)), df, len(small), lone, applies=True)


def statistic_pooling(statistic: Statistic, left_out: Array) -> Pooling:
    """``pooling`` of a statistic's own strata."""
    return pooling(left_out, statistic.strata)
