"""Reading files of rows: JSON Lines (one JSON value a line) and delimited text (TSV, CSV), one row at a time."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

from scorers.errors import InvalidSubmission, Problem, Problems, ValidationError
from scorers.io.collector import gc_paused
from scorers.io.strict_json import loads_strict, strict_decoder
from scorers.io.text import BOM, decode_text, is_blank


def iter_json_lines(
    data: bytes, problems: Problems, error: type[ValidationError] = InvalidSubmission
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for every non-blank line; bad lines go to ``problems``.

    Lines are decoded and parsed one at a time, straight from the bytes, so that neither a decoded copy of
    the whole file nor its parsed lines are held at once: a caller that keeps a few fields of each line
    holds only those. Text that is not UTF-8 is refused at once, naming its line and byte (counted after
    a leading byte-order mark), and a file of blank lines is refused as empty. The caller pauses the
    collector over its whole loop (``gc_paused``): what it builds from each line counts as much as the line.
    """
    offset = len(BOM) if data.startswith(BOM) else 0
    view = memoryview(data)
    decoder = strict_decoder()
    blank = True
    number, start, size = 0, offset, len(data)
    while start <= size:
        end = data.find(b"\n", start)
        if end < 0:
            end = size
        number += 1
        try:
            line = str(view[start:end], "utf-8")
        except UnicodeDecodeError as exc:
            where = f"line {number}, byte {start - offset + exc.start}"
            raise error([Problem(where, "is not UTF-8 text (save the file as UTF-8)")]) from None
        start = end + 1
        if is_blank(line):
            continue
        blank = False
        try:
            value = loads_strict(line, decoder)
        except ValueError as exc:
            message = str(exc)
            if message.startswith("line 1, "):
                message = message[len("line 1, ") :]
            problems.add(f"line {number}", message)
            continue
        yield number, value
    if blank:
        raise error([Problem("", "the file is empty; expected one JSON object per line")])


def iter_tsv(data: bytes, error: type[ValidationError]) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, row)`` for every non-empty row of a tab-separated file (see ``iter_delimited``)."""
    return iter_delimited(data, error, "\t")


def iter_delimited(data: bytes, error: type[ValidationError], delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, row)`` for every non-empty row of a delimited file (TSV, CSV) with double-quote quoting.

    Fields may hold quoted tabs and newlines, so a row's number is the line it starts on. The bytes are
    decoded as they are read (a leading byte-order mark dropped), never copied whole into a string: a
    string of the file would take one to four bytes a character, and a ``StringIO`` of it as much again.
    """
    reader = csv.reader(
        io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline=""),
        delimiter=delimiter,
        quotechar='"',
        strict=True,
    )
    start = 1
    try:
        for row in reader:
            if row:
                yield start, row
            start = reader.line_num + 1
    except csv.Error as exc:
        kind = "TSV" if delimiter == "\t" else "CSV" if delimiter == "," else "delimited"
        raise error([Problem(f"line {reader.line_num}", f"not a valid {kind} row ({exc})")]) from None
    except UnicodeDecodeError:
        # The decoder read ahead by a chunk and counts from there: decoding the whole text names the place.
        decode_text(data, error)
        raise


def read_tsv(data: bytes, error: type[ValidationError]) -> list[list[str]]:
    """The non-empty rows of a tab-separated file (see ``iter_tsv``)."""
    with gc_paused():
        return [row for _, row in iter_tsv(data, error)]
