"""``classification``: one label per id, scored as scikit-learn scores it, configured in the bundle.

Gold: a TSV, CSV or JSON Lines file with an id column, a label column and optional group columns (all named in the
options; ``scorers.generic.tables`` reads them). Submission: the same shape (only its id and label columns are read)
or a JSON object ``{id: label}``. The public view of the gold, all that validation sees, is its list of ids: group
columns are read from the gold at scoring time only, so grouping by a column participants do not have reveals nothing
through a refusal (an organizer should still group by public columns, such as a document or a language, since the
per-group numbers are shown).

Metrics: ``accuracy``, and ``precision``, ``recall`` and ``f1`` with scikit-learn's ``average`` (``macro`` over the
labels that occur in gold or predictions, ``micro``, ``weighted`` by gold support, or ``binary``: the numbers of
``positive_label``) and ``zero_division`` (0 or 1). Without ``group_by`` they are computed over all items (units are
items). With ``group_by`` (a list of columns) each group of items that share those columns' values is scored on its
own (units are groups), and the groups are averaged with equal weight level by level: over the groups of each value
of the first column, ..., then over the values of the first column (SV-Ident's per-document, then per-language mean
is ``group_by: [lang, doc_id]``). ``primary_metric`` picks the metric that ranks (default ``f1``).

Breakdowns: ``class`` (each gold label's precision, recall, F1 and support over all items), ``confusion`` (gold label
-> predicted label -> count; predictions that are not gold labels are counted under ``OTHER``), and with ``group_by``
the mean per value of the first group column and each group's numbers (``group``).

Refused: a missing, unknown or repeated id, a label that is not a non-empty string (or a JSON integer), and, when the
``labels`` option lists the label set, a label outside it (in the gold too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scorers.base import Breakdown, MetricSpec, OptionSpec, UnitStats
from scorers.errors import OptionsError, Problems
from scorers.families.classification import AVERAGES, class_scores, group_prf, weighted_prf
from scorers.families.weighted import WeightedMetric
from scorers.generic import tables
from scorers.generic.keyed import KeyedGold, KeyedScorer, layout_options, unit_key
from scorers.registry import register

METRICS = ("accuracy", "precision", "recall", "f1")
#: The confusion column of predicted labels that no gold item has.
OTHER = "(not a gold label)"


@register
class Classification(KeyedScorer[str]):
    """One label per id: accuracy and precision, recall, F1 as scikit-learn averages them, optionally per group."""

    name = "classification"
    version = "1.0"
    title = "Classification (one label per id)"
    description = (
        "Accuracy and precision, recall and F1 (scikit-learn's macro, micro, weighted or binary average) of one label "
        "per id, over all items or per group and then averaged level by level; the file layout is configured."
    )
    primary_metric = "f1"
    secondary_metrics = ("precision", "recall", "accuracy")
    metrics = (
        MetricSpec("f1", "F1 with the configured average (per group, then averaged over groups)"),
        MetricSpec("precision", "precision with the configured average"),
        MetricSpec("recall", "recall with the configured average"),
        MetricSpec("accuracy", "share of items labelled right"),
    )
    metric_names = METRICS
    value_option = "label_column"
    value_meaning = "a label (a non-empty string)"
    options = (
        *layout_options("label_column", "label", "the label"),
        OptionSpec("labels", None, "the label set; a label outside it is refused (null: any label)"),
        OptionSpec("average", "macro", "scikit-learn's average: macro, micro, weighted, or binary"),
        OptionSpec("positive_label", None, "the label whose numbers average 'binary' reports"),
        OptionSpec("zero_division", 0, "the value of a precision or recall whose denominator is 0: 0 or 1"),
        OptionSpec("primary_metric", "f1", "the metric that ranks: accuracy, precision, recall or f1"),
    )
    gold_format = "TSV, CSV or JSON Lines with the id, label and group columns the options name"
    submission_format = "the gold's format with the id and label columns, or a JSON object {id: label}"
    submission_filename = "predictions.tsv"

    @classmethod
    def check_config(cls, config: Mapping[str, Any]) -> None:
        if config["average"] == "binary" and config["positive_label"] is None:
            raise OptionsError(
                f"option 'positive_label' of {cls.name} is needed when 'average' is 'binary'", "positive_label"
            )

    @classmethod
    def check_option(cls, name: str, value: Any) -> Any:
        if name == "positive_label":
            if value is not None and tables.label(value) is None:
                raise OptionsError(f"option 'positive_label' of {cls.name} must be a label (a string), not {value!r}")
            return None if value is None else tables.label(value)
        if name == "labels":
            labels = [tables.label(v) for v in value] if isinstance(value, list) else [None]
            if value is not None and (not labels or None in labels or len(set(labels)) != len(labels)):
                raise OptionsError(f"option 'labels' of {cls.name} must be null or a list of distinct labels")
            return value if value is None else labels
        value = super().check_option(name, value)
        choices = {"average": AVERAGES, "zero_division": (0, 1)}.get(name)
        if choices is not None and (value not in choices or isinstance(value, bool)):
            raise OptionsError(f"option {name!r} of {cls.name} must be one of {', '.join(map(str, choices))}")
        return value

    @staticmethod
    def convert(value: Any) -> str | None:
        return tables.label(value)

    def sample_value(self) -> str:
        """The first label of the ``labels`` option, else ``"0"``."""
        allowed = self.config["labels"]
        return str(allowed[0]) if allowed else "0"

    def check_values(self, values: Mapping[str, str], problems: Problems) -> None:
        allowed = self.config["labels"]
        if allowed is not None:
            known = set(allowed)
            for key, value in values.items():
                if value not in known:
                    problems.add(f"id {tables.show(key)}", f"label {tables.show(value)} is not one of {allowed}")

    def score_items(self, items: Iterable[tuple[Any, str, str]]) -> dict[Any, dict[str, float]]:
        scored = group_prf(
            items,
            average=self.config["average"],
            pos_label=self.config["positive_label"],
            zero_division=float(self.config["zero_division"]),
        )
        return {group: {"items": s.size, "accuracy": s.accuracy, **s.metrics()} for group, s in scored.items()}

    def weighted_items(self, stats: Sequence[UnitStats], metric: str) -> WeightedMetric:
        return weighted_prf(
            [(s["gold"], s["predicted"]) for s in stats],
            metric,
            average=self.config["average"],
            pos_label=self.config["positive_label"],
            zero_division=float(self.config["zero_division"]),
        )

    def breakdown(self, gold: KeyedGold[str], submission: dict[str, str], stats: Mapping[str, UnitStats]) -> Breakdown:
        # Only the items of the units in ``stats``: a report on part of the units (``scorers.split``) reads nothing
        # of the others, not even which labels they hold.
        groups, by_group = gold.table.groups, bool(self.layout.group_by)
        labels = {
            key: label
            for key, label in gold.table.values.items()
            if (unit_key(groups[key]) if by_group else key) in stats
        }
        known = sorted(set(labels.values()))
        confusion: dict[str, dict[str, float]] = {label: {} for label in known}
        for key, label in labels.items():
            predicted = submission[key] if submission[key] in confusion else OTHER
            confusion[label][predicted] = confusion[label].get(predicted, 0.0) + 1
        pairs = [(label, submission[key]) for key, label in labels.items()]
        per_class = class_scores(pairs, zero_division=float(self.config["zero_division"]))
        return {
            "class": {label: per_class[label] for label in known},
            "confusion": confusion,
            **super().breakdown(gold, submission, stats),
        }
