"""JSON Lines parsed by orjson where the strict decoder would give the same values (``plain_lines``), for readers
that read the file again strictly (``Unsure``) when it cannot vouch for that.

The strict decoder (``strict_json``) runs a Python hook per object for SCORING.md's repeated keys; orjson parses the
same lines in C, in two thirds of the time with the checks below (0.07 s against 0.10 s of CPU for the 25,300 lines
of the score bench's 100x FAMuS CDAE gold). Where it succeeds its value is the strict decoder's but for four things,
each checked here or left to it:

- a repeated key (orjson keeps the last member): counted, not searched. Every colon of a JSON text is a member's
  or inside a string, and orjson writes every member and every string back with its colons as they were, so a
  text with as many colons as ``orjson.dumps`` of its value repeated no key. An escaped colon (``\\u003a``) would
  add one to the written text that the read one lacks, so a text holding one is not vouched for;
- nesting past the standard library's limit (about 990 levels, fewer in a deep call; orjson reads 1,024): a line
  with fewer than ``SAFE_DEPTH`` brackets cannot nest that deep, and a line with more is not vouched for;
- NaN, infinities, numbers that overflow, bytes that are not UTF-8, lone surrogates, a byte-order mark inside
  the text: orjson refuses them itself, and so the text is left to the strict decoder;
- an integer past 64 bits, which orjson reads as a float: the value differs only in the type of that number. A
  caller that shows values in its messages reads the file again strictly as soon as it finds any problem, so
  every refusal is worded from the strict decoder's values.

orjson rounds every float as ``float()`` does (``tests/scorers/test_plain_json.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scorers.io.text import BOM

#: A text with fewer brackets than this cannot nest past what the standard library's decoder reads.
SAFE_DEPTH = 500
#: Lines shorter than this cannot hold ``SAFE_DEPTH`` brackets; longer ones have theirs counted.
_SHORT_LINE = 2 * SAFE_DEPTH


class Unsure(Exception):
    """The fast reader cannot vouch for the text: the caller reads the whole file again strictly."""


def _escaped_colon(data: bytes) -> bool:
    return b"\\u003a" in data or b"\\u003A" in data


def plain_lines(data: bytes) -> Iterator[tuple[int, Any]]:
    """``(line_number, value)`` for every non-blank line of a JSON Lines file, as ``iter_json_lines`` gives them
    for a file it finds no problem in; raises ``Unsure`` at the first line it cannot vouch for (or for a file of
    blank lines), for the caller to read the file again with ``iter_json_lines``, which words the refusals.

    Lines are split at ``\\n`` only, as ``iter_json_lines`` splits them (a ``\\r`` is JSON white space).
    """
    import orjson  # here: its import is a tenth of a small run's start-up, and only large readers call this

    loads, dumps, error = orjson.loads, orjson.dumps, orjson.JSONDecodeError
    if _escaped_colon(data):
        raise Unsure
    # Each line is read where it lies (orjson reads a memoryview), not copied out: a split copied the whole file.
    view, size = memoryview(data), len(data)
    start = len(BOM) if data.startswith(BOM) else 0
    number = 0
    read = False
    while start <= size:
        end = data.find(b"\n", start)
        if end < 0:
            end = size
        number += 1
        line_start, start = start, end + 1
        if end == line_start:
            continue
        try:
            value = loads(view[line_start:end])
        except error:
            if data[line_start:end].isspace():  # a blank line (ASCII white space, as ``is_blank`` counts it)
                continue
            raise Unsure from None
        colons = data.count(b":", line_start, end)
        if colons and dumps(value).count(b":") != colons:
            raise Unsure
        if (
            end - line_start >= _SHORT_LINE
            and data.count(b"[", line_start, end) + data.count(b"{", line_start, end) >= SAFE_DEPTH
        ):
            raise Unsure
        read = True
        yield number, value
    if not read:
        raise Unsure
