"""How the commands show scores: the pages' one rule (``leaderboard.tables.metric_text``). A metric that is a
fraction in [0, 1] (accuracy, F1, MAP) is shown as a percentage with two decimals (``61.25 %``); any other
number (a count, an error in the task's unit, a correlation, a scoring program's column) as the tables write
it, with the decimals its metric declares (``0.8250``), under its title (a scoring program's column title).
``--json`` output is never converted: every value as the scorers and the API give it, fractions in [0, 1]."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scorers.description import metric_text as table_text

PERCENT = "percent"
NUMBER = "number"


@dataclass(frozen=True)
class Shown:
    """How one metric is shown: its format (``percent`` or ``number``), decimals and title, as the API
    describes it (``format``, ``decimals``, ``title``)."""

    format: str = PERCENT
    decimals: int | None = None
    title: str = ""


def metric_text(value: Any, shown_as: str | Shown = PERCENT) -> str:
    """``value`` as a person reads it: ``61.25 %`` for a fraction, the table's text for a plain number (``0.6125``),
    ``-`` for none."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    shown = shown_as if isinstance(shown_as, Shown) else Shown(shown_as)
    text = table_text(float(value), fraction=shown.format == PERCENT, decimals=shown.decimals)
    return f"{text} %" if shown.format == PERCENT else text


def formats_of(metrics: Iterable[Mapping[str, Any]]) -> dict[str, Shown]:
    """``{metric: Shown}`` from the metrics of a description or a leaderboard (``format``, ``decimals``, ``title``)."""
    out = {}
    for m in metrics:
        decimals = m.get("decimals")
        out[m["name"]] = Shown(
            str(m.get("format", PERCENT)),
            decimals if isinstance(decimals, int) and not isinstance(decimals, bool) else None,
            str(m.get("title") or ""),
        )
    return out


def metric_lines(metrics: Mapping[str, Any], formats: Mapping[str, Shown], indent: str = "  ") -> list[str]:
    """One line per metric: its title (else its name) and its value as ``metric_text`` shows it (a metric of no
    known format is a plain number)."""
    shown = {name: formats.get(name, Shown(NUMBER)) for name in metrics}
    titles = {name: shown[name].title or name for name in metrics}
    width = max((len(title) for title in titles.values()), default=0)
    return [f"{indent}{titles[name]:<{width}}  {metric_text(value, shown[name])}" for name, value in metrics.items()]
