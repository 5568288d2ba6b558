"""Tables as plain data, ready for pages and exports: columns with headers and directions, rows of cells.

Everything here reads a scorer's description (``ScorerDescription``, as the task's options configure it) and
stored breakdowns (``{dimension: {key: {metric: value}}}``), so a page never needs the scorer itself. Declared
metrics that are fractions are shown as percentages with two decimals; the others (counts such as ``num_ret``,
errors, correlations) and anything else a breakdown carries (counts such as ``gold``) as plain numbers.

* ``metrics_table``: a submission's overall metrics, one row.
* ``breakdown_table`` / ``breakdown_tables``: one row per language, document, relation label, role...
* ``leaderboard_columns`` / ``leaderboard_table``: the ranked board with every metric and the
  scorer's ``leaderboard_breakdowns`` as extra columns (per-language F1 for SV-Ident).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from leaderboard.ranking import Entry, metric_value, utc

# The one rule that writes a metric's value lives beside the metric's declaration; re-exported for the tables' callers.
from scorers.description import LARGE as LARGE
from scorers.description import MISSING as MISSING
from scorers.description import metric_text as metric_text
from scorers.description import percent as percent
from scorers.description import plain_number as plain_number

if TYPE_CHECKING:
    from scorers.description import ScorerDescription

ARROW_UP = "↑"
ARROW_DOWN = "↓"


def arrow(higher_is_better: bool) -> str:
    """The direction marker a column header carries: ``↑`` when higher is better, ``↓`` otherwise."""
    return ARROW_UP if higher_is_better else ARROW_DOWN


def humanize(dimension: str) -> str:
    """``relation_label`` -> ``Relation label`` (breakdown dimensions are snake_case identifiers)."""
    words = dimension.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders digit runs by value, so ``doc2`` comes before ``doc10``.

    Written by hand because the standard library has none and it is five lines; each part is tagged
    so that numbers and text never compare with each other.
    """
    parts = re.split(r"(\d+)", text)
    return tuple((0, int(p)) if p.isdigit() else (1, p.casefold()) for p in parts if p)


@dataclass(frozen=True)
class Column:
    """One value column: which number it shows, its header and how it is formatted.

    ``dimension`` and ``key`` are set for a breakdown column on the leaderboard (``language``,
    ``de``); ``higher_is_better`` is ``None`` for a number that is not a declared metric. ``fraction``: shown as
    a percentage (the metric's declared format); other numbers are shown plain.
    """

    metric: str
    label: str
    higher_is_better: bool | None
    meaning: str = ""
    dimension: str | None = None
    key: str | None = None
    fraction: bool = False
    #: For a plain number: the decimals its metric declares (None: up to four).
    decimals: int | None = None
    #: The metric's title as its scorer declares it (a scoring program's column title), without arrow or key;
    #: empty: the metric has none, and its name stands for it.
    title: str = ""

    @property
    def id(self) -> str:
        """Stable machine name: ``f1``, or ``language:de:f1`` for a breakdown column."""
        if self.dimension is None:
            return self.metric
        return f"{self.dimension}:{self.key}:{self.metric}"

    @property
    def header(self) -> str:
        """What an export heads the column with: ``id`` with the metric's title for its name (``Prediction
        score``, ``language:de:F1``); the same as ``id`` for a metric without a title."""
        name = self.title or self.metric
        return name if self.dimension is None else f"{self.dimension}:{self.key}:{name}"

    @property
    def format_name(self) -> str:
        """``percent`` or ``number``, as ``MetricSpec.format``."""
        return "percent" if self.fraction else "number"

    def format(self, value: float | None) -> str:
        return metric_text(value, fraction=self.fraction, decimals=self.decimals)


@dataclass(frozen=True)
class Row:
    """One table row: its key (a language, a document...), raw values and formatted cells."""

    key: str
    values: tuple[float | None, ...]
    cells: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A titled table; ``key_label`` heads the first column, which holds each row's key."""

    dimension: str
    title: str
    key_label: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON or a template."""
        return {
            "dimension": self.dimension,
            "title": self.title,
            "key_label": self.key_label,
            "columns": [{"id": c.id, "label": c.label, "meaning": c.meaning} for c in self.columns],
            "rows": [{"key": r.key, "values": list(r.values), "cells": list(r.cells)} for r in self.rows],
        }


def metric_column(description: ScorerDescription, name: str, *, dimension: str | None = None, key: str = "") -> Column:
    """The column of one number; declared metrics get their arrow and meaning, others none."""
    spec = description.metric(name)
    prefix = f"{key} " if dimension is not None else ""
    if spec is None:
        return Column(name, f"{prefix}{name}", None, "", dimension, key if dimension is not None else None)
    better = spec.higher_is_better
    label = f"{prefix}{spec.label} {arrow(better)}"
    where = key if dimension is not None else None
    return Column(name, label, better, spec.meaning, dimension, where, spec.fraction, spec.decimals, spec.title)


def column_names(description: ScorerDescription, present: Iterable[str]) -> list[str]:
    """The numbers to show, in order: declared metrics as declared (those present), then others by name."""
    present_set = set(present)
    declared = [spec.name for spec in description.metrics if spec.name in present_set]
    return declared + sorted(present_set - set(declared))


def _row(key: str, columns: Sequence[Column], values: Mapping[str, Any]) -> Row:
    numbers = tuple(metric_value(values, c.metric) for c in columns)
    return Row(key, numbers, tuple(c.format(v) for c, v in zip(columns, numbers, strict=True)))


def metrics_table(description: ScorerDescription, metrics: Mapping[str, Any]) -> Table:
    """A submission's overall metrics as one row keyed ``overall``."""
    columns = tuple(metric_column(description, name) for name in column_names(description, metrics))
    return Table("overall", "Overall", "", columns, (_row("overall", columns, metrics),))


def breakdown_table(
    description: ScorerDescription, breakdown: Mapping[str, Mapping[str, Mapping[str, Any]]], dimension: str
) -> Table:
    """One row per key of ``breakdown[dimension]`` (natural order), one column per number they carry.

    A dimension the breakdown lacks gives an empty table, so a page can show "no breakdown".
    """
    groups = breakdown.get(dimension, {})
    names = column_names(description, (name for values in groups.values() for name in values))
    columns = tuple(metric_column(description, name) for name in names)
    rows = tuple(_row(key, columns, groups[key]) for key in sorted(groups, key=natural_key))
    return Table(dimension, f"Per {humanize(dimension).lower()}", humanize(dimension), columns, rows)


def breakdown_tables(
    description: ScorerDescription, breakdown: Mapping[str, Mapping[str, Mapping[str, Any]]]
) -> list[Table]:
    """Every breakdown of a submission: the leaderboard dimensions first, then the rest by name,
    with the long per-unit (per-document) table last."""
    first = [d for d in description.leaderboard_breakdowns if d in breakdown]
    last = [d for d in dict.fromkeys((description.unit, "document")) if d in breakdown and d not in first]
    middle = sorted(d for d in breakdown if d not in first and d not in last)
    return [breakdown_table(description, breakdown, d) for d in (*first, *middle, *last)]


# -- the leaderboard ----------------------------------------------------------------------------------


def leaderboard_columns(
    description: ScorerDescription, entries: Sequence[Entry], breakdown_metrics: Sequence[str] | None = None
) -> tuple[Column, ...]:
    """Every metric the entries carry, then for each ``leaderboard_breakdowns`` dimension and key one
    column per ``breakdown_metrics`` (default: the primary metric), e.g. ``language:de:f1``."""
    metric_names = column_names(description, (n for e in entries for n in (e.candidate.metrics or {})))
    columns = [metric_column(description, name) for name in metric_names]
    wanted = list(breakdown_metrics) if breakdown_metrics is not None else [description.primary_metric]
    for dimension in description.leaderboard_breakdowns:
        keys = {key for e in entries for key in e.candidate.columns.get(dimension, {})}
        for key in sorted(keys, key=natural_key):
            columns += [metric_column(description, name, dimension=dimension, key=key) for name in wanted]
    return tuple(columns)


def column_value(entry: Entry, column: Column) -> float | None:
    """The number an entry shows in a column, or ``None``."""
    candidate = entry.candidate
    if column.dimension is None:
        return metric_value(candidate.metrics, column.metric)
    group = candidate.columns.get(column.dimension, {}).get(column.key or "")
    return metric_value(group, column.metric)


@dataclass(frozen=True)
class BoardRow:
    """One leaderboard row, its values in the order of ``Board.columns``."""

    rank: int
    team: str
    system: str
    submitted_at: datetime
    baseline: bool
    submission_id: int
    scored_submissions: int
    values: tuple[float | None, ...]
    cells: tuple[str, ...]


@dataclass(frozen=True)
class Board:
    columns: tuple[Column, ...]
    rows: tuple[BoardRow, ...]


def leaderboard_table(
    description: ScorerDescription, entries: Sequence[Entry], breakdown_metrics: Sequence[str] | None = None
) -> Board:
    """The ranked entries as rows of formatted cells (times in UTC), columns as ``leaderboard_columns``."""
    columns = leaderboard_columns(description, entries, breakdown_metrics)
    rows = []
    for entry in entries:
        c = entry.candidate
        values = tuple(column_value(entry, col) for col in columns)
        cells = tuple(col.format(v) for col, v in zip(columns, values, strict=True))
        rows.append(
            BoardRow(
                entry.rank,
                c.team,
                c.system,
                utc(c.submitted_at),
                c.baseline,
                c.submission_id,
                entry.scored_submissions,
                values,
                cells,
            )
        )
    return Board(columns, tuple(rows))
