"""How the commands show scores: one unit, the pages'. A metric that is a fraction in [0, 1] (accuracy, F1, MAP)
is shown as a percentage with two decimals (``61.25 %``); any other number (a count, an error in the task's
unit, a correlation) as it is. ``--json`` output is never converted: every value as the scorers and the API
give it, fractions in [0, 1]."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

PERCENT = "percent"


def metric_text(value: Any, shown_as: str = PERCENT) -> str:
    """``value`` as a person reads it: ``61.25 %`` for a fraction, ``0.6125`` for a plain number, ``-`` for none."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    if shown_as == PERCENT:
        return f"{100 * value:.2f} %"
    return str(value) if isinstance(value, int) else f"{value:.4f}"


def formats_of(metrics: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """``{metric: percent|number}`` from the metrics of a description or a leaderboard (their ``format``)."""
    return {m["name"]: m.get("format", PERCENT) for m in metrics}


def metric_lines(metrics: Mapping[str, Any], formats: Mapping[str, str], indent: str = "  ") -> list[str]:
    """One line per metric: its name and its value as ``metric_text`` shows it (a metric of no known
    format is a plain number)."""
    width = max((len(name) for name in metrics), default=0)
    return [
        f"{indent}{name:<{width}}  {metric_text(value, formats.get(name, 'number'))}" for name, value in metrics.items()
    ]
