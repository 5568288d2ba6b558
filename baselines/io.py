"""Reading task files for baselines and writing submissions, with errors that name the file.

The decoding rules are the scorers' (``scorers.io``: UTF-8 with an optional byte-order mark,
strict JSON, TSV with double-quote quoting); a file they refuse becomes ``InvalidInputs`` naming
the file and the first problems. Submissions are written compactly and deterministically.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from baselines.errors import InvalidInputs
from scorers.errors import InvalidGold, Problems, ValidationError
from scorers.io import BOM, iter_json_lines, load_json, read_tsv

#: How many of a refused file's problems an error message repeats.
_LISTED = 5


def _refusal(label: str, error: ValidationError) -> InvalidInputs:
    problems = "; ".join(str(p) for p in error.problems[:_LISTED])
    more = f" (and {error.total - _LISTED} more)" if error.total > _LISTED else ""
    return InvalidInputs(f"{label}: {problems}{more}")


def first_line(data: bytes) -> bytes:
    """The first non-blank line of a file, stripped (and without a byte-order mark), to tell formats apart."""
    data = data.removeprefix(BOM)
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line = data[start:end].strip()
        if line:
            return line
        start = end + 1
    return b""


def describe_files(files: Mapping[str, bytes]) -> str:
    return ", ".join(repr(name) for name in sorted(files)) or "none"


def pick_file(
    files: Mapping[str, bytes],
    kind: str,
    suffixes: Sequence[str],
    looks_right: Callable[[bytes], bool] | None = None,
) -> tuple[str, bytes]:
    """The one file of ``files`` whose name ends with one of ``suffixes``.

    Public inputs may come with other files (a README, the documents of FAMuS CDAE); when several
    files fit, those whose content ``looks_right`` are kept, then the one named ``inputs.<ext>``
    (the name the platform gives derived inputs) is taken.
    """
    fitting = sorted(name for name in files if name.lower().endswith(tuple(suffixes)))
    if len(fitting) > 1 and looks_right is not None:
        fitting = [name for name in fitting if looks_right(files[name])] or fitting
    if len(fitting) > 1:
        fitting = [name for name in fitting if name.lower().rsplit("/", 1)[-1].startswith("inputs.")] or fitting
    if len(fitting) != 1:
        wanted = " or ".join(suffixes)
        found = "none" if not fitting else "several: " + ", ".join(repr(n) for n in fitting)
        raise InvalidInputs(
            f"expected exactly one {wanted} file among the {kind} (or one named inputs{suffixes[0]}); "
            f"found {found} (files: {describe_files(files)})"
        )
    name = fitting[0]
    return name, files[name]


def tsv_records(label: str, data: bytes) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the rows of a TSV file, each row a mapping from column name to field."""
    try:
        rows = read_tsv(data, InvalidGold)
    except ValidationError as error:
        raise _refusal(label, error) from None
    if not rows:
        raise InvalidInputs(f"{label}: the file is empty; expected a header row and one row per item")
    header, body = rows[0], rows[1:]
    records = []
    for number, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise InvalidInputs(f"{label}, row {number}: has {len(row)} fields; the header has {len(header)}")
        records.append(dict(zip(header, row, strict=True)))
    return header, records


def require_columns(label: str, header: Sequence[str], columns: Iterable[str]) -> None:
    missing = [column for column in columns if column not in header]
    if missing:
        raise InvalidInputs(
            f"{label}: missing column(s) {', '.join(missing)}; the header has {', '.join(header) or 'nothing'}"
        )


def json_objects(label: str, data: bytes, required: Sequence[str] = ()) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every line of a JSON Lines file; every line an object with ``required``."""
    problems = Problems(InvalidGold)
    try:
        lines = list(iter_json_lines(data, problems, InvalidGold))
        problems.raise_if_any()
    except ValidationError as error:
        raise _refusal(label, error) from None
    out = []
    for number, value in lines:
        if not isinstance(value, dict):
            raise InvalidInputs(f"{label}, line {number}: expected a JSON object, found {type(value).__name__}")
        missing = [key for key in required if key not in value]
        if missing:
            raise InvalidInputs(f"{label}, line {number}: missing key(s) {', '.join(missing)}")
        out.append((number, value))
    return out


def json_document(label: str, data: bytes) -> Any:
    try:
        return load_json(data, InvalidGold)
    except ValidationError as error:
        raise _refusal(label, error) from None


def dump_json(value: Any) -> bytes:
    """One compact JSON document, keys in the order given, non-ASCII kept as UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"


def dump_json_lines(rows: Iterable[Any]) -> bytes:
    return b"".join(dump_json(row) for row in rows)
