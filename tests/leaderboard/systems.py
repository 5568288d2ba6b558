"""Small resamplable scorers for the interval and comparison tests, and unit builders.

They are not registered scorers: intervals need only ``aggregate``, ``stratum`` and ``weighted_metric``,
and these reuse the scorer library's own aggregations (nested means, micro sums).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scorers.base import UnitStats, prf
from scorers.families import weighted
from scorers.families.averaging import nested_mean


class MeanOf:
    """``mean`` of the units' ``x``; with ``by_language``, per ``lang`` then over languages (stratified)."""

    def __init__(self, *, by_language: bool = False, vectorized: bool = True) -> None:
        self.levels: tuple[str, ...] = ("lang",) if by_language else ()
        self.vectorized = vectorized

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return {"mean": nested_mean(stats, ["x"], self.levels)["x"]}

    def stratum(self, unit: UnitStats) -> str | None:
        return str(unit["lang"]) if self.levels else None

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> weighted.WeightedMetric | None:
        if not self.vectorized:
            return None
        keys = [tuple(s[level] for level in self.levels) for s in stats]
        return weighted.nested_mean(weighted.unit_column(stats, "x"), keys)


class MicroF1:
    """Micro ``f1`` of units ``{"c": correct, "p": predicted, "g": gold}`` (0 where undefined, as the tasks do)."""

    def __init__(self, *, vectorized: bool = True) -> None:
        self.vectorized = vectorized

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        sums = [sum(float(s[key]) for s in stats) for key in ("c", "p", "g")]
        return {"f1": prf(*sums)[2]}

    def stratum(self, unit: UnitStats) -> str | None:
        return None

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> weighted.WeightedMetric | None:
        if not self.vectorized:
            return None
        columns = (weighted.unit_column(stats, key) for key in ("c", "p", "g"))
        return weighted.prf("f1", *columns)


def mean_units(values: Sequence[float], languages: Sequence[str] | None = None) -> dict[str, UnitStats]:
    """Units ``d0, d1, ...`` with these ``x`` (and languages)."""
    langs = languages or ["en"] * len(values)
    return {f"d{i:04d}": {"x": float(x), "lang": lang} for i, (x, lang) in enumerate(zip(values, langs, strict=True))}


def count_units(rows: np.ndarray | Sequence[Sequence[int]]) -> dict[str, UnitStats]:
    """Units ``d0, d1, ...`` from ``[correct, predicted, gold]`` rows."""
    return {f"d{i:04d}": {"c": int(c), "p": int(p), "g": int(g)} for i, (c, p, g) in enumerate(rows)}


def documents(rng: np.random.Generator, n: int, hit_rate: float = 0.6) -> np.ndarray:
    """``n`` documents of an extraction task: gold and predicted mentions, and how many are correct."""
    gold = 1 + rng.poisson(8, n)
    predicted = 1 + rng.poisson(6, n)
    correct = rng.binomial(np.minimum(gold, predicted), hit_rate)
    return np.stack([correct, predicted, gold], axis=1)
