"""What a scorer declares about itself, as typed values: its metrics and its whole description.

``ScorerDescription`` is what ranking (``leaderboard.ranking.Rules``), tables and exports, the pages, the
API and the ``podium scorers`` command read about a scorer: its primary and secondary metrics, their
meanings and directions, its formats and options. ``to_dict`` gives the same as plain JSON values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scorers.options import OptionSpec


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
