"""Reading a piece of a TREC file in columns: the fast path of ``scorers.generic.trec_format``.

A piece (whole lines, UTF-8 checked, no NUL) whose every line has exactly its format's fields is split in one C pass
(``columns``); a run's scores are read in one call per piece (``scores``); the lines of one query, which usually
follow each other, are found by a search over the query column rather than by comparing every line with the next
(``runs``). Each function answers None where the piece needs the careful, line-by-line reading, which words every
problem; none refuses anything itself.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
import struct
from array import array

#: Integers as trec_format's relevance (an optional sign, at most 10 digits) joined by single spaces.
_INTEGERS = re.compile(rb"[+-]?\d{1,10}(?: [+-]?\d{1,10})*")
#: What a decimal score may hold besides digits; Python's ``float`` also reads ``_``, ``nan`` and ``inf``.
_NUMERIC = b"0123456789.eE+-"
#: The mark a piece's newlines become before it is split: a field of its own, which no line can hold (NUL is refused).
_MARK = b"\x00"
#: More runs of one query than this in a piece: its lines are mixed, and comparing each line with the next is faster.
_MAX_RUNS = 16


def columns(chunk: bytes, fields: int, wanted: tuple[int, ...]) -> list[list[bytes]] | None:
    """The ``wanted`` columns of a piece whose every line has exactly ``fields`` fields, split in one C pass; None
    for a piece with anything else (a blank line, a line with more or fewer fields) or a ``#`` (a comment, perhaps).

    The piece's newlines become a field of their own (``_MARK``), so that the whole piece splits at once; it is a
    table of ``fields`` + 1 columns exactly when there are as many fields as that times the lines and every last
    column is that mark.
    """
    if b"#" in chunk:
        return None
    ended = chunk.endswith(b"\n")
    lines = chunk.count(b"\n") + (not ended)
    tokens = chunk.replace(b"\n", b" \x00 ").split()
    if not ended:
        tokens.append(_MARK)
    width = fields + 1
    if len(tokens) != width * lines or tokens[fields::width].count(_MARK) != lines:
        return None
    return [tokens[i::width] for i in wanted]


def plain_grades(grades: list[bytes]) -> bool:
    """Every grade an integer of at most 10 digits with an optional sign: checked in C where they are all digits,
    else by one regular expression over them all."""
    if b"".join(grades).translate(None, b"0123456789"):
        return _INTEGERS.fullmatch(b" ".join(grades)) is not None  # a field holds no space
    return max(map(len, grades), default=0) <= 10


def scores(fields: list[bytes]) -> array[float] | None:
    """Plainly decimal, finite scores as C floats (the cast from a double that ``array("f")`` makes); None if any
    needs a closer look (hexadecimal, NaN, infinity, an underscore, garbage, a value that overflows)."""
    if b"".join(fields).translate(None, _NUMERIC):
        return None
    try:
        values = list(map(float, fields))
    except ValueError:
        return None
    if not math.isfinite(sum(values)):  # an infinite value, or finite ones whose sum overflows: look closer
        return None
    out = array("f")
    out.frombytes(struct.pack(f"{len(values)}f", *values))  # native "f": the same C cast, without a call per value
    return out


def runs(queries: list[bytes]) -> list[int]:
    """The bounds of the runs of equal queries: ``[0, end of the first run, ..., len(queries)]``.

    Each run's end is searched for by galloping and halving (a run is usually hundreds of lines), and the run then
    checked whole by one count; a piece whose queries change more often is compared line by line.
    """
    n = len(queries)
    bounds = [0]
    start = 0
    while start < n:
        query = queries[start]
        if queries[-1] == query:
            end = n
        else:  # queries[low] is the query and queries[high] is not; queries[-1] is not
            low, step = start, 1
            high = start + step
            while high < n - 1 and queries[high] == query:
                low, step = high, step * 2
                high = min(low + step, n - 1)
            while high - low > 1:
                middle = (low + high) // 2
                if queries[middle] == query:
                    low = middle
                else:
                    high = middle
            end = high
        if len(bounds) > _MAX_RUNS or queries[start:end].count(query) != end - start:
            cuts = itertools.compress(itertools.count(1), map(operator.ne, queries[1:], queries[:-1]))
            return [0, *cuts, n]
        bounds.append(end)
        start = end
    return bounds
