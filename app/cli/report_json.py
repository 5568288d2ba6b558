"""A report as ``json.dumps(report, ensure_ascii=False)`` writes it, character for character, in about half the time.

The standard library's encoder spends most of a large report's time on ``float.__repr__`` (a 5.6 MB report of
150,000 floats: 70 to 90 ms of CPU); orjson writes the same values in 8 ms. Its text differs from the standard
library's in ways that are either visible in its output or refused by it, so ``report_json`` keeps orjson's text
only where none of them can be present, and hands anything else to ``json.dumps`` itself (orjson has no option for
the standard library's spacing or float forms, so the differences are checked here by hand):

- **Spacing.** ``json.dumps`` puts ``", "`` between items and ``": "`` after keys; orjson's compact text has
  neither. Adding a space after every ``,`` and ``:`` is exact when none of them is inside a string. With no
  escaped quote (``\\"``) in the text, every ``"`` opens or closes a string; kept with only the commas and colons,
  a string with neither is ``""``, and two strings never touch there (a comma or a colon always separates them in
  JSON). So when deleting every ``""`` leaves no quote, no string holds a comma or a colon.
- **Floats.** Both write the shortest digits that read back as the same double; they differ only in form below
  1e-4: ``repr`` writes ``1e-05`` and ``1.5e-07``, orjson ``0.00001`` and ``1.5e-7``. Such a float leaves
  ``0.0000`` or a digit followed by ``e-`` in orjson's text: either hands the report to ``json.dumps``. From 1e-4
  up, and from 1e16 (``1e+16``), the two forms are the same (``tests/app/test_report_json.py`` checks them against
  ``repr``).
- **NaN and infinities.** ``json.dumps`` writes ``NaN`` and ``Infinity``, orjson ``null``: any ``null`` hands the
  report to ``json.dumps``.
- **What orjson refuses** (keys that are not strings, integers beyond 64 bits, lone surrogates, nesting deeper than
  254, subclasses of ``str``, ``int``, ``float``, ``dict`` and ``list``, dataclasses, dates, numpy's numbers, cycles)
  goes to ``json.dumps``, which writes it or raises as it always did. Only an ``Enum`` member and a ``UUID``, which
  ``json.dumps`` refuses, orjson writes; reports hold neither.

Strings: both escape ``"``, ``\\``, ``\\b \\f \\n \\r \\t`` by name and the other control characters as
``\\u00xx``, and write every other character as it is (``ensure_ascii=False``).

A large report's compact text is never held whole: a dictionary of more than ``GROUP`` members (a per-document
table) is given to orjson ``GROUP`` members at a time, and the dictionaries above it member by member; the pieces
join to orjson's text of the whole (a piece's nesting counts from its own top, so a report nested a level or two
beyond orjson's bound may be written from pieces: the same characters as ``json.dumps`` writes).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

import orjson

#: Subclasses, dataclasses and dates are refused (``json.dumps`` calls a subclass's own methods).
_REFUSE = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
#: Every digit as ``0``: one search then finds a digit followed by ``e-``.
_DIGITS = bytes.maketrans(b"123456789", b"000000000")
#: Every byte but the quote, the comma and the colon.
_NOT_SEPARATORS = bytes(byte for byte in range(256) if byte not in b'",:')


#: The size of the pieces ``_digit_before_e_minus`` translates.
_PIECE = 1 << 18


def _digit_before_e_minus(text: bytes) -> bool:
    """Whether a digit followed by ``e-`` is in ``text``: with every digit as ``0``, one search, piece by piece (each
    piece's last two bytes read again with the next), so that a copy of a large report's whole text is not held."""
    return any(
        b"0e-" in text[start : start + _PIECE + 2].translate(_DIGITS)
        for start in range(0, max(len(text) - 2, 1), _PIECE)
    )


#: What in orjson's compact text may be written otherwise by ``json.dumps``, each as a test of the text.
SIGNS: dict[str, Callable[[bytes], bool]] = {
    "null": lambda text: b"null" in text,  # None, NaN or an infinity
    "float in [1e-5, 1e-4)": lambda text: b"0.0000" in text,
    "float below 1e-5": _digit_before_e_minus,
    "quote in a string": lambda text: b'\\"' in text,
    "comma or colon in a string": lambda text: b'"' in text.translate(None, _NOT_SEPARATORS).replace(b'""', b""),
}


#: The compact text is made a piece at a time (``_compact_pieces``), and spaced and decoded a part at a time.
PART = 1 << 16


def report_json(report: Any, signs: Iterable[Callable[[bytes], bool]] = SIGNS.values()) -> str:
    """``json.dumps(report, ensure_ascii=False)``: the same characters, or the same exception. ``signs`` are for
    the tests, which leave one out to see that it is needed."""
    return "".join(report_json_parts(report, signs))


def report_json_parts(
    report: Any, signs: Iterable[Callable[[bytes], bool]] = SIGNS.values(), part: int = PART
) -> Iterator[str]:
    """``report_json``'s text in parts of at most about ``part`` bytes (one part where ``json.dumps`` writes it).

    orjson's compact text is made piece by piece (``_compact_pieces``) twice: once to look for the signs, then to
    be written, so that a large report's whole text is never held (5.6 MB beside its 1.5 MB of values, at FAMuS's
    100-fold bench input). No sign spans two pieces: a piece is whole values, keys and brackets."""
    try:
        if any(sign(piece) for piece in _compact_pieces(report) for sign in signs):
            raise _Differs
    except (TypeError, _Differs):  # orjson.JSONEncodeError is a TypeError
        yield json.dumps(report, ensure_ascii=False)
        return
    # A part may end inside a character's UTF-8 bytes: the decoder keeps them for the next part. A comma or a colon
    # is one byte, which a part's end never splits.
    decoder = codecs.getincrementaldecoder("utf-8")()
    for compact in _compact_pieces(report):
        for start in range(0, len(compact), part):
            text = decoder.decode(compact[start : start + part].replace(b",", b", ").replace(b":", b": "))
            if text:
                yield text
    decoder.decode(b"", final=True)  # raises where the text ended inside a character, which orjson never writes


class _Differs(Exception):
    """orjson's text holds a sign that ``json.dumps`` writes it otherwise."""


#: A dictionary of more members than this is written this many members at a time (a report's per-document table).
GROUP = 1024
#: How deep ``_compact_pieces`` looks for such a dictionary: the report, its breakdown, a breakdown's table.
_DEPTH = 3


def _compact_pieces(value: Any, depth: int = _DEPTH) -> Iterator[bytes]:
    """``orjson.dumps(value, option=_REFUSE)`` in pieces that join to its text, or a ``TypeError`` where orjson
    refuses a piece: a dictionary that holds a large one within ``depth`` levels is written member by member, and a
    large one ``GROUP`` members at a time. Written by hand: orjson has no incremental writer."""
    if type(value) is not dict or not _holds_large(value, depth):
        yield orjson.dumps(value, option=_REFUSE)
        return
    items = iter(value.items())
    if len(value) > GROUP:
        separator = b"{"
        while group := dict(islice(items, GROUP)):
            yield separator + orjson.dumps(group, option=_REFUSE)[1:-1]
            separator = b","
    else:
        separator = b"{"
        for key, member in items:
            if type(key) is not str:  # a key orjson refuses (``json.dumps`` writes some: it is handed them)
                raise TypeError(f"a key that is not a string: {key!r}")
            yield separator + orjson.dumps(key, option=_REFUSE) + b":"
            yield from _compact_pieces(member, depth - 1)
            separator = b","
    yield b"}"


def _holds_large(value: dict[Any, Any], depth: int) -> bool:
    """Whether ``value``, or a dictionary within ``depth`` levels of it, has more than ``GROUP`` members."""
    if len(value) > GROUP:
        return True
    return depth > 1 and any(type(member) is dict and _holds_large(member, depth - 1) for member in value.values())
