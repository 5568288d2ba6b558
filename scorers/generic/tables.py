"""Reading id-keyed files for the generic ``classification`` and ``regression`` scorers.

A file is a table with named columns, in one of three formats: ``tsv`` or ``csv`` (a header row naming the columns,
then one row per item; double-quote quoting; fields are stripped of surrounding white space) or ``jsonl`` (one JSON
object per line, read by SCORING.md's rules for JSON). A submission may also be one JSON object ``{id: value}``.
The options name the id column, the value column (a label or a number) and the gold's group columns.

Values: an id or a label is a non-empty string (a JSON integer stands for its decimal digits; ``true``, ``1.0`` and
``null`` are refused); a number is a finite decimal (``1``, ``-2.5``, ``3e-2``; in JSON a number, not a string or a
boolean). Ids are unique within a file. Every problem is collected with its place (line, or key of a JSON object).

A submission is checked against the gold's ids only (its public view): an id the gold lacks, a gold id it lacks and a
repeated id are refused, and, for labels, a label outside the ``labels`` option when it is set.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from scorers.errors import InvalidGold, InvalidSubmission, Problem, Problems, ValidationError
from scorers.io import BOM, gc_paused, iter_delimited, iter_json_lines, iter_json_object

FORMATS = ("tsv", "csv", "jsonl")
_DELIMITERS = {"tsv": "\t", "csv": ","}
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

V = TypeVar("V")


@dataclass(frozen=True)
class Layout:
    """Where things are: the format, the id column, the value column and the gold's group columns."""

    format: str
    id_column: str
    value_column: str
    group_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Table(Generic[V]):
    """A file's values by id, in file order, and (gold only) each id's values of the group columns."""

    values: dict[str, V]
    groups: dict[str, tuple[str, ...]]


class Text(str):
    """A field of a TSV or CSV file: text that a number column reads as a decimal (a JSON string never is one)."""

    __slots__ = ()


def show(value: Any, limit: int = 40) -> str:
    text = repr(str(value)) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def label(value: Any) -> str | None:
    """A label or id as a string, or None when the value cannot be one."""
    if isinstance(value, str):
        return value.strip() if value.strip() else None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


#: The largest magnitude a number may have: its square, and sums of many squares, stay within a double.
MAX_MAGNITUDE = 1e150


def number(value: Any) -> float | None:
    """A number of magnitude at most ``MAX_MAGNITUDE``, or None (a TSV or CSV field is read as a decimal)."""
    if isinstance(value, Text):
        text = value.strip()
        converted = float(text) if _DECIMAL.fullmatch(text) else math.inf
    elif isinstance(value, (int, float)) and not isinstance(value, bool):  # a JSON number
        try:
            converted = float(value)
        except OverflowError:  # an integer beyond the range of a double
            return None
    else:
        return None
    return converted if abs(converted) <= MAX_MAGNITUDE else None


def _delimited(data: bytes, layout: Layout, error: type[ValidationError]) -> Iterator[tuple[str, dict[str, Any]]]:
    rows = iter_delimited(data, error, _DELIMITERS[layout.format])
    first = next(rows, None)
    if first is None:
        raise error([Problem("", f"the file is empty; expected a header row naming {layout.id_column!r} and the rest")])
    header_line, header = first[0], [name.strip() for name in first[1]]
    needed = [layout.id_column, layout.value_column, *(layout.group_by if error is InvalidGold else ())]
    missing = [name for name in needed if name not in header]
    repeated = sorted({name for name in header if header.count(name) > 1})
    if missing or repeated:
        what = f"lacks the column(s) {', '.join(missing)}" if missing else f"repeats {', '.join(repeated)}"
        if error is InvalidSubmission:
            what += (
                f" (a submission is a {layout.format.upper()} file with a header row, or a JSON object {{id: value}})"
            )
        raise error([Problem(f"line {header_line}", f"the header row {what}")])
    for line, row in rows:
        if all(not field.strip() for field in row):
            continue
        if len(row) != len(header):
            yield f"line {line}", {"": f"has {len(row)} fields; the header names {len(header)}"}
            continue
        yield f"line {line}", dict(zip(header, map(Text, row), strict=True))


def _rows(
    data: bytes, layout: Layout, error: type[ValidationError], problems: Problems, *, mapping_allowed: bool
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(place, row)`` of every item; a row ``{"": message}`` is a problem of that place."""
    start = data[len(BOM) :] if data.startswith(BOM) else data
    if mapping_allowed and start.lstrip()[:1] == b"{" and not _is_json_lines(start, layout):
        for key, value in iter_json_object(data, _not_an_object, error):
            yield f"key {show(key)}", {layout.id_column: key, layout.value_column: value}
        return
    if layout.format in _DELIMITERS:
        yield from _delimited(data, layout, error)
        return
    for line, value in iter_json_lines(data, problems, error):
        if not isinstance(value, dict):
            yield f"line {line}", {"": f"expected a JSON object, found {type(value).__name__}"}
        else:
            yield f"line {line}", value


def _is_json_lines(data: bytes, layout: Layout) -> bool:
    """Whether a file that starts with ``{`` is JSON Lines in this layout (its first line, an object with the id
    column) rather than one JSON object ``{id: value}``."""
    if layout.format != "jsonl":
        return False
    first = data.lstrip().split(b"\n", 1)[0]
    try:
        value = json.loads(first)
    except ValueError:
        return False
    return isinstance(value, dict) and layout.id_column in value


def _not_an_object(value: Any) -> ValidationError:
    return InvalidSubmission([Problem("", f"expected a JSON object {{id: value}}, found {type(value).__name__}")])


@gc_paused()
def read_table(
    data: bytes,
    layout: Layout,
    convert: Callable[[Any], V | None],
    expected: str,
    error: type[ValidationError],
    *,
    mapping_allowed: bool = False,
) -> Table[V]:
    """The values of a file by id; ``error`` lists every row that is wrong. ``convert`` reads a value (None: bad)."""
    problems = Problems(error)
    values: dict[str, V] = {}
    groups: dict[str, tuple[str, ...]] = {}
    first_place: dict[str, str] = {}
    wanted_groups = layout.group_by if error is InvalidGold else ()
    for place, row in _rows(data, layout, error, problems, mapping_allowed=mapping_allowed):
        if "" in row and len(row) == 1:
            problems.add(place, row[""])
            continue
        missing = [c for c in (layout.id_column, layout.value_column, *wanted_groups) if c not in row]
        if missing:
            problems.add(place, f"lacks {', '.join(map(repr, missing))}")
            continue
        key = label(row[layout.id_column])
        if key is None:
            problems.add(place, f"the id {show(row[layout.id_column])} is not a non-empty string")
            continue
        if key in first_place:
            problems.add(place, f"id {show(key)} is repeated (first at {first_place[key]})")
            continue
        first_place[key] = place
        value = convert(row[layout.value_column])
        group = tuple(label(row[c]) for c in wanted_groups)
        if value is None:
            problems.add(place, f"{layout.value_column} {show(row[layout.value_column])} is not {expected}")
        elif None in group:
            problems.add(place, "a group column holds no value (or one that is not a string)")
        else:
            values[key] = value
            if wanted_groups:
                groups[key] = group  # type: ignore[assignment]  # no None left in it
    if not first_place and not problems:
        problems.add("", "the file holds no item")
    problems.raise_if_any()
    return Table(values, groups)


def check_ids(submitted: Collection[str], ids: Sequence[str], problems: Problems) -> None:
    """Refuse ids the gold lacks and gold ids the submission lacks (``ids``: the gold's, in order)."""
    known = set(ids)
    for key in submitted:
        if key not in known:
            problems.add(f"id {show(key)}", "is not an id of the phase")
    for key in ids:
        if key not in submitted:
            problems.add(f"id {show(key)}", "has no value in the submission")
