"""What the generic scorers of one value per id share: the file layout options, reading, ids, grouping.

``KeyedScorer`` reads the gold and submissions with ``scorers.generic.tables`` in the layout its options give
(``format``, ``id_column``, the value column, ``group_by``), checks a submission against the gold's ids only (the
public view), and scores either all items at once (units are items: ``{"gold", "predicted"}``) or each group of
items that share the ``group_by`` columns' values (units are groups), whose numbers are then averaged with equal
weight level by level (``nested_mean``). Subclasses say how a value is read and how a set of items is scored.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from scorers.base import Breakdown, MetricSpec, OptionSpec, PublicIds, Scorer, UnitStats
from scorers.errors import InvalidGold, InvalidSubmission, OptionsError, Problems
from scorers.families import weighted
from scorers.families.averaging import nested_mean
from scorers.families.weighted import WeightedMetric
from scorers.generic import tables
from scorers.generic.tables import Layout, Table
from scorers.io import delimited_bytes, json_lines_bytes

V = TypeVar("V")


@dataclass(frozen=True)
class KeyedGold(Generic[V]):
    """The gold values by id (file order) and each id's group (its values of the ``group_by`` columns)."""

    table: Table[V]

    @property
    def ids(self) -> list[str]:
        return list(self.table.values)


def layout_options(value_column: str, default: str, value_meaning: str) -> tuple[OptionSpec, ...]:
    """The options that say where things are in the files."""
    return (
        OptionSpec("format", "tsv", "the gold's format: tsv, csv (a header row names the columns) or jsonl"),
        OptionSpec("id_column", "id", "the column (JSON key) holding the id of an item"),
        OptionSpec(value_column, default, f"the column (JSON key) holding {value_meaning}"),
        OptionSpec(
            "group_by",
            [],
            "gold columns whose values group items: each group is scored, then groups are averaged level by level",
        ),
    )


def unit_key(values: Sequence[str]) -> str:
    """A group's unit id: its one value, or the JSON list of its values (unambiguous whatever they hold)."""
    return values[0] if len(values) == 1 else json.dumps(list(values), ensure_ascii=False)


class KeyedScorer(Scorer[KeyedGold[V], PublicIds, dict[str, V]], Generic[V]):
    """Base of ``classification`` and ``regression``; subclasses set the class attributes and the two scorers."""

    #: The option naming the value column, and what a value is (for messages).
    value_option: ClassVar[str]
    value_meaning: ClassVar[str]
    #: The metric names, in reporting order (``primary_metric`` picks one of them).
    metric_names: ClassVar[tuple[str, ...]]
    unit: ClassVar[str] = "item or group"
    #: Written with ``group_by`` only: a row per item would tell its answer.
    per_unit_breakdown: ClassVar[str] = "group"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        group_by = tuple(self.config["group_by"])
        self.layout = Layout(self.config["format"], self.config["id_column"], self.config[self.value_option], group_by)

    @classmethod
    def check_option(cls, name: str, value: Any) -> Any:
        value = super().check_option(name, value)
        if name == "format" and value not in tables.FORMATS:
            raise OptionsError(
                f"option 'format' of {cls.name} must be one of {', '.join(tables.FORMATS)}, not {value!r}"
            )
        if name.endswith("_column") and not value:
            raise OptionsError(f"option {name!r} of {cls.name} must name a column")
        if name == "group_by" and (not all(isinstance(c, str) and c for c in value) or len(set(value)) != len(value)):
            raise OptionsError(f"option 'group_by' of {cls.name} must be a list of distinct column names")
        if name == "primary_metric" and value not in cls.metric_names:
            raise OptionsError(f"option 'primary_metric' of {cls.name} must be one of {', '.join(cls.metric_names)}")
        return value

    @classmethod
    def configured_metrics(cls, config: Mapping[str, Any]) -> tuple[str, tuple[str, ...], tuple[MetricSpec, ...]]:
        """The ``primary_metric`` option's metric first, then the declared ranking order without it."""
        primary = config["primary_metric"]
        order = [primary, *(m for m in (cls.primary_metric, *cls.secondary_metrics) if m != primary)]
        specs = {spec.name: cls.primary_spec(spec, config) if spec.name == primary else spec for spec in cls.metrics}
        ranked = [specs[name] for name in order]
        return primary, tuple(order[1:]), (*ranked, *(spec for spec in cls.metrics if spec.name not in order))

    @classmethod
    def primary_spec(cls, spec: MetricSpec, config: Mapping[str, Any]) -> MetricSpec:
        """The primary metric as the options configure it (its direction, for one); as declared by default."""
        return spec

    @staticmethod
    @abstractmethod
    def convert(value: Any) -> V | None:
        """A value of a file as the scorer holds it, or None when it cannot be one."""

    def check_values(self, values: Mapping[str, V], problems: Problems) -> None:
        """Further checks of the values of a gold or submission (adding to ``problems``); none by default."""

    @abstractmethod
    def sample_value(self) -> V:
        """The value every item of the sample submission gets (a label, a number)."""

    @abstractmethod
    def score_items(self, items: Iterable[tuple[Any, V, V]]) -> dict[Any, dict[str, float]]:
        """The metrics of each group of ``(group, gold, predicted)`` items."""

    # -- the steps ----------------------------------------------------------------------------------------
    def parse_gold(self, data: bytes) -> KeyedGold[V]:
        table = tables.read_table(data, self.layout, self.convert, self.value_meaning, InvalidGold)
        problems = Problems(InvalidGold)
        self.check_values(table.values, problems)
        problems.raise_if_any()
        return KeyedGold(table)

    def public_view(self, gold: KeyedGold[V]) -> PublicIds:
        """The gold's ids, in their order; no value and no group (group columns are read at scoring time only)."""
        return PublicIds.of(gold.ids)

    def parse_submission(self, data: bytes, public: PublicIds) -> dict[str, V]:
        layout = Layout(self.layout.format, self.layout.id_column, self.layout.value_column)
        read = tables.read_table(
            data, layout, self.convert, self.value_meaning, InvalidSubmission, mapping_allowed=True
        )
        problems = Problems(InvalidSubmission)
        tables.check_ids(read.values, public.ids, problems)
        self.check_values(read.values, problems)
        problems.raise_if_any()
        return read.values

    @classmethod
    def configured_per_unit_breakdown(cls, config: Mapping[str, Any]) -> str | None:
        return cls.per_unit_breakdown if config["group_by"] else None

    def sample_submission(self, public: PublicIds) -> bytes:
        """Every id with ``sample_value``, in the gold's format with its id and value columns."""
        value, (id_column, value_column) = self.sample_value(), (self.layout.id_column, self.layout.value_column)
        if self.layout.format == "jsonl":
            return json_lines_bytes({id_column: key, value_column: value} for key in public.ids)
        rows = [(id_column, value_column), *((key, value) for key in public.ids)]
        return delimited_bytes(rows, "\t" if self.layout.format == "tsv" else ",")

    def unit_stats(self, gold: KeyedGold[V], submission: dict[str, V]) -> dict[str, UnitStats]:
        values = gold.table.values
        if not self.layout.group_by:
            return {key: {"gold": value, "predicted": submission[key]} for key, value in values.items()}
        groups = gold.table.groups
        scored = self.score_items((groups[key], value, submission[key]) for key, value in values.items())
        return {
            unit_key(group): {**dict(zip(self.layout.group_by, group, strict=True)), **numbers}
            for group, numbers in scored.items()
        }

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        if self.layout.group_by:
            return nested_mean(stats, self.metric_names, self.layout.group_by[:-1])
        scored = self.score_items(("", s["gold"], s["predicted"]) for s in stats)
        return {m: float(scored[""][m]) if scored else 0.0 for m in self.metric_names}

    def stratum(self, unit: UnitStats) -> str | None:
        # Groups are averaged per part (the values of the outer group columns): a resample keeps each part's size.
        levels = self.layout.group_by[:-1]
        return unit_key([str(unit[level]) for level in levels]) if levels else None

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> WeightedMetric | None:
        if not self.layout.group_by:
            return self.weighted_items(stats, metric)
        keys = [tuple(s[level] for level in self.layout.group_by[:-1]) for s in stats]
        return weighted.nested_mean(weighted.unit_column(stats, metric), keys)

    def weighted_items(self, stats: Sequence[UnitStats], metric: str) -> WeightedMetric | None:
        """``weighted_metric`` when units are items; None (callers loop over resamples) unless a subclass can."""
        return None

    def breakdown(self, gold: KeyedGold[V], submission: dict[str, V], stats: Mapping[str, UnitStats]) -> Breakdown:
        """With ``group_by``: the mean per value of the first group column, and each group's numbers (``group``)."""
        if not self.layout.group_by:
            return {}
        first, levels = self.layout.group_by[0], self.layout.group_by[1:-1]
        by_first: dict[str, list[UnitStats]] = {}
        for value in stats.values():
            by_first.setdefault(value[first], []).append(value)
        names = self.metric_names
        return {
            first: {v: nested_mean(by_first[v], names, levels) for v in sorted(by_first)},
            self.per_unit_breakdown: {key: {m: float(stats[key][m]) for m in names} for key in sorted(stats)},
        }
