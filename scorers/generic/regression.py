"""``regression``: one number per id (rating and similarity tasks), configured in the bundle.

Gold and submission as for ``classification`` (``scorers.generic.keyed``): TSV, CSV or JSON Lines with the columns
the options name, or a JSON object ``{id: number}`` as a submission; the public view is the gold's ids. Values are
finite numbers of magnitude at most 1e150 (so that squared errors and their sums stay finite): NaN, infinities and
larger numbers are refused, as are missing, unknown and repeated ids.

Metrics (``scorers.families.regression``): ``pearson``, ``spearman`` and ``kendall`` correlations (SciPy's), ``mae``,
``rmse`` and ``r2``. ``primary_metric`` picks the one that ranks (default ``pearson``); ``higher_is_better`` may
state its direction (null: the metric's own, lower for mae and rmse). With ``group_by`` each group is scored and the
groups are averaged level by level, as in ``classification``; a group of one item has no correlation (0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from scorers.base import MetricSpec, OptionSpec
from scorers.errors import OptionsError
from scorers.families import regression
from scorers.families.regression_plain import PLAIN_MAX
from scorers.generic import tables
from scorers.generic.keyed import KeyedScorer, layout_options
from scorers.registry import register

_MEANINGS = {
    "pearson": "Pearson correlation of predicted and gold values",
    "spearman": "Spearman rank correlation",
    "kendall": "Kendall rank correlation (tau-b)",
    "mae": "mean absolute error",
    "rmse": "root mean squared error",
    "r2": "coefficient of determination R² of the predictions",
}


@register
class Regression(KeyedScorer[float]):
    """One number per id: correlations, errors and R², optionally per group."""

    name = "regression"
    version = "1.0"
    title = "Regression (one number per id)"
    description = (
        "Pearson, Spearman and Kendall correlations (SciPy's), mean absolute and root mean squared error and R² of one "
        "number per id, over all items or per group and then averaged level by level; the file layout is configured."
    )
    primary_metric = "pearson"
    secondary_metrics = ("spearman", "kendall", "r2")
    metrics = tuple(
        MetricSpec(m, _MEANINGS[m], m not in regression.LOWER_IS_BETTER, fraction=False) for m in regression.METRICS
    )
    metric_names = regression.METRICS
    value_option = "value_column"
    value_meaning = "a finite number (of magnitude at most 1e150)"
    options = (
        *layout_options("value_column", "value", "the number"),
        OptionSpec("primary_metric", "pearson", "the metric that ranks: pearson, spearman, kendall, mae, rmse or r2"),
        OptionSpec("higher_is_better", None, "the primary metric's direction (null: its own; lower for mae, rmse)"),
    )
    gold_format = "TSV, CSV or JSON Lines with the id, value and group columns the options name"
    submission_format = "the gold's format with the id and value columns, or a JSON object {id: number}"
    submission_filename = "predictions.tsv"

    @staticmethod
    def convert(value: Any) -> float | None:
        return tables.number(value)

    def sample_value(self) -> float:
        return 0.0

    @classmethod
    def check_option(cls, name: str, value: Any) -> Any:
        if name == "higher_is_better" and value is not None and not isinstance(value, bool):
            raise OptionsError(f"option 'higher_is_better' of {cls.name} must be null, true or false")
        return super().check_option(name, value)

    @classmethod
    def primary_spec(cls, spec: MetricSpec, config: Mapping[str, Any]) -> MetricSpec:
        stated = config["higher_is_better"]
        return spec if stated is None else replace(spec, higher_is_better=stated)

    def score_items(self, items: Iterable[tuple[Any, float, float]]) -> dict[Any, dict[str, float]]:
        groups: dict[Any, tuple[list[float], list[float]]] = {}
        for group, gold, predicted in items:
            pair = groups.setdefault(group, ([], []))
            pair[0].append(gold)
            pair[1].append(predicted)
        # Without numpy only where the whole scoring is small: many small groups add up to what numpy does faster.
        plain = sum(len(gold) for gold, _ in groups.values()) <= PLAIN_MAX
        return {
            group: {"items": len(gold), **regression.scores(gold, predicted, plain=plain)}
            for group, (gold, predicted) in groups.items()
        }
