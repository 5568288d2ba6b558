"""What a scorer declares about itself, as typed values: its metrics and its whole description, and the one
rule by which a metric's value is written for people (``metric_text``), which tables, pages, charts and the
commands all follow.

``ScorerDescription`` is what ranking (``leaderboard.ranking.Rules``), tables and exports, the pages, the
API and the ``podium scorers`` command read about a scorer: its primary and secondary metrics, their
meanings and directions, its formats and options. ``to_dict`` gives the same as plain JSON values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scorers.options import OptionSpec

#: What a table shows for no value.
MISSING = "–"
#: From this size on a number is written with an exponent (``1.2e+20``): its digits say nothing more, and a
#: value as large as a float may be (``1e308``) would otherwise fill the page with them.
LARGE = 1e15


def _special(value: float | None) -> str | None:
    """The text of a value that is no ordinary number: none, NaN or an infinity."""
    if value is None or math.isnan(value):
        return MISSING
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return None


def percent(value: float | None) -> str:
    """A fraction as a percentage with two decimals (``0.61254`` -> ``"61.25"``); ``"–"`` for no value.

    A value far outside [0, 1] (only a program's column can hold one) is written with an exponent, computed
    exactly (``1e308`` -> ``"1.00e+310"``), where multiplying the float by 100 would overflow to infinity."""
    special = _special(value)
    if special is not None or value is None:
        return special or MISSING
    if abs(value) * 100 >= LARGE:
        from decimal import Decimal  # only for such values: its import is a fiftieth of a scorer's start-up

        return f"{Decimal(value) * 100:.2e}"
    return f"{value * 100:.2f}"


def plain_number(value: float | None, decimals: int | None = None) -> str:
    """A count or other non-fraction: with ``decimals`` when its metric declares them, else integers without
    decimals and others with up to four; from ``LARGE`` on with an exponent."""
    special = _special(value)
    if special is not None or value is None:
        return special or MISSING
    if abs(value) >= LARGE:
        return f"{value:.{decimals}e}" if decimals is not None else f"{value:.4g}"
    if decimals is not None:
        return f"{value:.{decimals}f}"
    if value.is_integer():
        return str(int(value))
    # 0.99999999 rounds to "1.0000": written "1", never "1."
    return f"{value:.4f}".rstrip("0").rstrip(".")


def metric_text(value: float | None, *, fraction: bool, decimals: int | None = None) -> str:
    """The one way a metric's value is written for people, on every page, table, chart and in the command
    line: a fraction (its metric declares it lies in [0, 1]) as a percentage with two decimals, any other
    number as ``plain_number`` writes it with the decimals its metric declares."""
    return percent(value) if fraction else plain_number(value, decimals)


@dataclass(frozen=True)
class MetricSpec:
    """A metric a scorer reports: its name, a one-line meaning, its direction and its format.

    ``fraction``: the metric lies in [0, 1] and is shown as a percentage (``61.25``); otherwise (a count, an error
    in the task's unit, a correlation) it is shown as a plain number (``0.6125``, ``42``).
    """

    name: str
    meaning: str
    higher_is_better: bool = True
    fraction: bool = True
    #: Decimals a plain number is shown with (a scoring program's column with a ``numeric_format``); None: up to four.
    decimals: int | None = None
    #: What tables and pages head its column with (a scoring program's column title); empty: its name.
    title: str = ""

    @property
    def label(self) -> str:
        """The column's heading: its title, else its name."""
        return self.title or self.name

    def text(self, value: float | None) -> str:
        """``value`` as every table, page, chart and command writes it (``metric_text``)."""
        return metric_text(value, fraction=self.fraction, decimals=self.decimals)

    @property
    def format(self) -> str:
        """``percent`` or ``number``: how tables, pages and exports show the metric."""
        return "percent" if self.fraction else "number"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "meaning": self.meaning,
            "higher_is_better": self.higher_is_better,
            "format": self.format,
        }
        if self.decimals is not None:
            out["decimals"] = self.decimals
        if self.title:
            out["title"] = self.title
        return out


@dataclass(frozen=True)
class ScorerDescription:
    """Everything a person, a page or a leaderboard needs to know about a scorer (``Scorer.describe()``)."""

    name: str
    version: str
    title: str
    #: What the scorer computes, in a few sentences.
    summary: str
    primary_metric: str
    #: Tie-breakers after the primary metric, in order.
    secondary_metrics: tuple[str, ...]
    metrics: tuple[MetricSpec, ...]
    options: tuple[OptionSpec, ...]
    gold_format: str
    submission_format: str
    #: The file name a participant's file conventionally has (``submission.json``).
    submission_filename: str
    #: What one unit of the per-unit statistics is, for people (``document``, ``group``).
    unit: str
    #: Breakdown dimensions whose columns a leaderboard may show next to the metrics.
    leaderboard_breakdowns: tuple[str, ...]
    #: The breakdown dimension with one row per document (or group, query, frame) that the per-document
    #: downloads and chart read; None where the scorer stores no such rows (a row per item would tell the answers).
    per_unit_breakdown: str | None = "document"
    #: Submissions are read as uploaded (a scoring program's zip of result files): there is no sample to build.
    raw_submission: bool = False

    def metric(self, name: str) -> MetricSpec | None:
        """The declared metric ``name``, or None."""
        return next((spec for spec in self.metrics if spec.name == name), None)

    @property
    def higher_is_better(self) -> bool:
        """The direction of the primary metric."""
        spec = self.metric(self.primary_metric)
        return spec.higher_is_better if spec is not None else True

    def to_dict(self) -> dict[str, Any]:
        """The description as plain JSON values (the ``podium scorers --json`` and API shape)."""
        return {
            "name": self.name,
            "version": self.version,
            "title": self.title,
            "description": self.summary,
            "primary_metric": self.primary_metric,
            "secondary_metrics": list(self.secondary_metrics),
            "higher_is_better": self.higher_is_better,
            "metrics": [spec.to_dict() for spec in self.metrics],
            "options": [{"name": o.name, "default": o.default, "meaning": o.meaning} for o in self.options],
            "gold_format": self.gold_format,
            "submission_format": self.submission_format,
            "submission_filename": self.submission_filename,
            "unit": self.unit,
            "per_unit_breakdown": self.per_unit_breakdown,
            "raw_submission": self.raw_submission,
            "leaderboard_breakdowns": list(self.leaderboard_breakdowns),
        }
