"""CSV and JSON exports of a ranked leaderboard and of its per-document breakdowns.

Metrics are written as fractions (``0.6125``, not ``61.25``) with full float precision, times as
ISO 8601 in UTC, and a value a submission lacks as an empty CSV cell or JSON ``null``. Columns
follow ``tables.leaderboard_columns``, so an export shows exactly what the page shows.
The functions return text; the caller chooses the encoding (UTF-8) and the file name.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from leaderboard.ranking import Entry, metric_value, utc
from leaderboard.tables import column_names, column_value, leaderboard_columns, natural_key

if TYPE_CHECKING:
    from leaderboard.uncertainty import BoardUncertainty
    from scorers.description import ScorerDescription

#: First characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) read a cell as a
#: formula or command (OWASP "CSV injection"), and the control characters that can precede one.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\n")
ENTRY_FIELDS = ("rank", "team", "system", "submitted_at", "baseline")
#: The columns a board with uncertainty adds after the metrics (the interval is of the primary metric).
INTERVAL_FIELDS = (
    "low",
    "high",
    "level",
    "method",
    "units",
    "few_units",
    "zero_width",
    "too_few_units",
    "reliable",
    "label",
)
UNCERTAINTY_FIELDS = (*(f"interval_{f}" for f in INTERVAL_FIELDS), "tied_group")

Breakdown = Mapping[str, Mapping[str, Mapping[str, Any]]]


def safe_cell(text: str) -> str:
    """Text for a CSV cell that no spreadsheet evaluates.

    Team and system names are chosen by participants, and everyone downloads these files: a name
    such as ``=HYPERLINK(...)`` or ``=cmd|' /C calc'!A0`` would otherwise run as a formula when an
    organizer opens the CSV. A leading apostrophe makes spreadsheets show the text as it is;
    the cost is that a name that really starts with ``-`` or ``=`` carries the apostrophe in the file
    (the JSON export has the names untouched).
    """
    # Leading spaces are skipped too: some spreadsheets trim them before looking for a formula.
    return "'" + text if text.lstrip(" ").startswith(FORMULA_PREFIXES) else text


def iso_utc(moment: datetime) -> str:
    """``2024-05-03T12:00:00Z``: ISO 8601 in UTC (naive times are taken to be UTC)."""
    return utc(moment).isoformat().replace("+00:00", "Z")


def _finite(value: float | None) -> float | None:
    """The value, or ``None`` for an infinity (JSON has no infinities; NaN is already ``None``)."""
    return value if value is None or math.isfinite(value) else None


def _csv_number(value: float | None) -> str:
    # repr gives the shortest text that reads back as the same float.
    return "" if value is None else repr(value)


def _json_text(data: Any) -> str:
    # allow_nan=False: NaN is not JSON; missing values were turned into null before this point.
    return json.dumps(data, ensure_ascii=False, allow_nan=False, indent=2) + "\n"


def _write_csv(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """RFC 4180 CSV; header names are made safe here, row text by the callers (numbers stay as they are)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([safe_cell(h) for h in header])
    writer.writerows(rows)
    return buffer.getvalue()


def _entry_fields(entry: Entry) -> list[str]:
    c = entry.candidate
    baseline = "true" if c.baseline else "false"
    return [str(entry.rank), safe_cell(c.team), safe_cell(c.system), iso_utc(c.submitted_at), baseline]


def _entry_object(entry: Entry) -> dict[str, Any]:
    c = entry.candidate
    return {
        "rank": entry.rank,
        "team": c.team,
        "system": c.system,
        "submitted_at": iso_utc(c.submitted_at),
        "baseline": c.baseline,
    }


# -- the leaderboard ----------------------------------------------------------------------------------


def _csv_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _csv_number(_finite(value))
    return "" if value is None else str(value)


def _uncertainty_cells(entry: Entry, uncertainty: BoardUncertainty[int]) -> list[str]:
    interval = uncertainty.interval_dict(entry.candidate.submission_id) or {}
    group = uncertainty.group_of(entry.candidate.submission_id)
    return [*(_csv_value(interval.get(f)) for f in INTERVAL_FIELDS), _csv_value(group)]


def leaderboard_csv(
    description: ScorerDescription,
    entries: Sequence[Entry],
    breakdown_metrics: Sequence[str] | None = None,
    uncertainty: BoardUncertainty[int] | None = None,
) -> str:
    """One row per entry: rank, team, system, submitted_at, baseline, every metric, breakdown columns;
    with ``uncertainty`` (keyed by submission id) then the primary metric's interval and the tied group.
    A metric's column is headed with its title where the scorer declares one (``Column.header``: a scoring
    program's "Prediction score"), else with its name; the JSON export has both."""
    columns = leaderboard_columns(description, entries, breakdown_metrics)
    extra = UNCERTAINTY_FIELDS if uncertainty is not None else ()
    header = [*ENTRY_FIELDS, *(c.header for c in columns), *extra]
    rows = [
        [
            *_entry_fields(e),
            *(_csv_number(_finite(column_value(e, c))) for c in columns),
            *(_uncertainty_cells(e, uncertainty) if uncertainty is not None else ()),
        ]
        for e in entries
    ]
    return _write_csv(header, rows)


def leaderboard_json(
    description: ScorerDescription,
    entries: Sequence[Entry],
    breakdown_metrics: Sequence[str] | None = None,
    uncertainty: BoardUncertainty[int] | None = None,
) -> str:
    """``{"scorer", "primary_metric", "metrics", "columns", "column_titles", "entries"}``: ``metrics`` describes each
    declared metric (meaning, direction, format, title); ``columns`` are the columns' ids (metric keys) and
    ``column_titles`` what the CSV heads each with (``{id: header}``); each entry has its metrics and its breakdown
    columns nested as ``{"language": {"de": {"f1": ...}}}``. With ``uncertainty`` (keyed by submission id) each entry
    also has its ``interval`` and ``tied_group``, and the document its ``comparisons`` of neighbours."""
    columns = leaderboard_columns(description, entries, breakdown_metrics)
    objects = []
    for entry in entries:
        item = _entry_object(entry)
        breakdown: dict[str, dict[str, dict[str, float | None]]] = {}
        metrics: dict[str, float | None] = {}
        for column in columns:
            value = _finite(column_value(entry, column))
            if column.dimension is None:
                metrics[column.metric] = value
            else:
                breakdown.setdefault(column.dimension, {}).setdefault(column.key or "", {})[column.metric] = value
        item["metrics"] = metrics
        item["breakdown"] = breakdown
        if uncertainty is not None:
            item["interval"] = uncertainty.interval_dict(entry.candidate.submission_id)
            item["tied_group"] = uncertainty.group_of(entry.candidate.submission_id)
        objects.append(item)
    document: dict[str, Any] = {
        "scorer": description.name,
        "primary_metric": description.primary_metric,
        "metrics": [spec.to_dict() for spec in description.metrics],
        "columns": [c.id for c in columns],
        "column_titles": {c.id: c.header for c in columns},
        "entries": objects,
    }
    if uncertainty is not None:
        names = {e.candidate.submission_id: e.candidate.team for e in entries}
        document["comparisons"] = [
            {**c.to_dict(), "better_team": names.get(c.better), "worse_team": names.get(c.worse)}
            for c in uncertainty.comparisons
        ]
    return _json_text(document)


# -- per-document breakdowns --------------------------------------------------------------------------


def _document_rows(
    entries: Sequence[Entry], breakdowns: Mapping[int, Breakdown], dimension: str
) -> list[tuple[Entry, str, Mapping[str, Any]]]:
    if dimension in (*ENTRY_FIELDS, "metrics"):
        raise ValueError(f"breakdown dimension {dimension!r} clashes with an entry field of the export")
    rows = []
    for entry in entries:
        groups = breakdowns.get(entry.candidate.submission_id, {}).get(dimension, {})
        rows += [(entry, key, groups[key]) for key in sorted(groups, key=natural_key)]
    return rows


def documents_csv(
    description: ScorerDescription,
    entries: Sequence[Entry],
    breakdowns: Mapping[int, Breakdown],
    dimension: str = "document",
) -> str:
    """One row per entry and document: the entry's fields, ``document``, then every number of the row.

    ``breakdowns`` maps a submission id to its stored breakdown; an entry without one has no rows.
    """
    rows = _document_rows(entries, breakdowns, dimension)
    names = column_names(description, (n for _, _, values in rows for n in values))
    header = [*ENTRY_FIELDS, dimension, *names]
    lines = [
        [*_entry_fields(e), safe_cell(key), *(_csv_number(_finite(metric_value(values, n))) for n in names)]
        for e, key, values in rows
    ]
    return _write_csv(header, lines)


def documents_json(
    description: ScorerDescription,
    entries: Sequence[Entry],
    breakdowns: Mapping[int, Breakdown],
    dimension: str = "document",
) -> str:
    """``{"scorer", "dimension", "rows"}``, one row per entry and document with its metrics nested."""
    rows = _document_rows(entries, breakdowns, dimension)
    names = column_names(description, (n for _, _, values in rows for n in values))
    objects = [
        {**_entry_object(e), dimension: key, "metrics": {n: _finite(metric_value(values, n)) for n in names}}
        for e, key, values in rows
    ]
    return _json_text({"scorer": description.name, "dimension": dimension, "rows": objects})
