"""Strict JSON: SCORING.md's rules for a JSON document (repeated keys, NaN and overflowing numbers refused).

``load_json`` reads a whole-file document, ``loads_strict`` one text; both refuse with a located message.
``plain_loads`` is the fast path of the readers: orjson, where it is sure to give what the strict decoder gives.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from scorers.errors import InvalidSubmission, Problem, ValidationError
from scorers.io.collector import gc_paused
from scorers.io.text import decode_text, is_blank


class Refused(ValueError):
    """Raised inside the JSON decoder hooks; turned into a Problem by the caller."""


def _object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise Refused(f"key {key!r} appears more than once in one object")
            seen.add(key)
    return obj


def _refuse_constant(name: str) -> Any:
    raise Refused(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise Refused(f"the number {text[:40]} is too large (it overflows to infinity)")
    return value


def strict_decoder(*, finite: bool = True) -> json.JSONDecoder:
    """A JSON decoder with SCORING.md's rules: repeated keys, NaN/Infinity and overflowing numbers refused.

    With ``finite=False`` a number that overflows parses as an infinity instead of being refused: for a caller
    that checks every number it reads anyway (a Task 2 run's scores), and saves a Python call per number, which
    is a seventh of the time a run of 35 million scores takes to parse. Making a decoder costs about as much as
    parsing a short line, so a caller that parses many texts makes it once.
    """
    return json.JSONDecoder(
        object_pairs_hook=_object_without_repeats,
        parse_constant=_refuse_constant,
        parse_float=_finite_float if finite else None,
    )


def json_message(exc: ValueError | RecursionError) -> str:
    """The message for what the strict decoder raised: where (for a syntax error) and what."""
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})"
    if isinstance(exc, Refused):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return f"not valid JSON ({exc})"  # e.g. an integer literal with tens of thousands of digits


def loads_strict(text: str, decoder: json.JSONDecoder | None = None) -> Any:
    """Parse one JSON text by SCORING.md's rules; raises ``ValueError`` with a located message."""
    try:
        if text.startswith("\ufeff"):  # as json.loads refuses it; the decoder alone would say "Expecting value"
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        return (decoder or strict_decoder()).decode(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(json_message(exc)) from None


def load_json(data: bytes, error: type[ValidationError] = InvalidSubmission) -> Any:
    """Decode and parse a whole-file JSON document."""
    text = decode_text(data, error)
    if is_blank(text):
        raise error([Problem("", "the file is empty; expected a JSON document")])
    try:
        with gc_paused():
            return loads_strict(text)
    except ValueError as exc:
        raise error([Problem("", str(exc))]) from None


# -- the fast path ---------------------------------------------------------------------------------------------

#: A float at or past this magnitude may have been an integer that orjson read as a float (past 64 bits).
_LONG = float(2**63)
#: A norm below this bounds every magnitude below ``_LONG`` by a wide margin (``math.hypot`` is within an ulp).
_SURELY_SHORT = float(2**62)
#: Nesting that is safe from the standard library's recursion limit (orjson reads 1,024 levels, the standard library
#: fewer than the interpreter's limit of 1,000 frames); a text with fewer brackets cannot nest deeper.
_SAFE_DEPTH = 500
#: The types of the values of a flat object of numbers, checked in one C pass (a Task 2 run's candidates).
_NUMBERS = frozenset({int, float, bool})


def plain_loads(
    data: bytes | str, start: int = 0, end: int | None = None, *, colons: Callable[[int, int], int] | None = None
) -> Any:
    """``data[start:end]`` parsed by orjson where the strict decoder is sure to give the same value, else
    ``MISSING``: the caller then reads it with the strict decoder, which gives the value or the refusal.

    The standard library's decoder with a hook per object (repeated keys) is most of the time a reader spends on
    JSON; orjson parses the same text several times faster, and where it succeeds the value is the strict
    decoder's, but for four things that are checked here: a repeated key (orjson keeps the last), an integer past
    64 bits (orjson gives a float, so a float that large is left to the strict decoder), nesting past the standard
    library's limit, and NaN or an overflowing number (orjson refuses them, as it refuses bytes that are not
    UTF-8 and a byte-order mark, which leaves them to the strict decoder). orjson rounds every float as ``float()``
    does. The repeated-key check costs one count: every member of a JSON text has its colon, so a text with as
    many colons as the objects parsed from it have members repeated no key (a colon inside a string only makes
    the count larger, which sends the text to the strict decoder). ``colons``: what counts the colons of
    ``data[start:end]``, where the caller has a faster way than ``count``.
    """
    import orjson  # here: its import is a tenth of a small run's start-up, and only large readers call this

    end = len(data) if end is None else end
    try:
        value = orjson.loads(data[start:end] if start or end != len(data) else data)
    except orjson.JSONDecodeError:
        return MISSING
    members, nested = _members(value)
    colon = ":" if isinstance(data, str) else b":"
    found = data.count(colon, start, end) if colons is None else colons(start, end)  # type: ignore[arg-type]
    if members != found:
        return MISSING
    if nested:
        if isinstance(data, str):
            brackets = data.count("{", start, end) + data.count("[", start, end)
        else:
            brackets = data.count(b"{", start, end) + data.count(b"[", start, end)
        if brackets > _SAFE_DEPTH and _depth(value) > _SAFE_DEPTH:
            return MISSING
    return value


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: What ``plain_loads`` returns for a text it leaves to the strict decoder.
MISSING: Any = _Missing()


def _depth(value: Any) -> int:
    """How deep lists and objects nest in ``value`` (0 for a scalar)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if type(item) is dict else item if type(item) is list else None
        if children is not None:
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _members(value: Any) -> tuple[int, bool]:
    """The members of every object in ``value`` (-1 where a float may have been a long integer) and whether it
    holds a list or an object inside a list or an object."""
    if type(value) is dict and type(next(iter(value.values()), 0)) in _NUMBERS:
        # Likely a flat object of numbers (a Task 2 run's candidates): checked in C. ``math.hypot`` takes only numbers
        # (else TypeError) and its Euclidean norm, within an ulp, bounds every magnitude, so one below 2**62 says at
        # once that every value is a number and none near 2**63 (NaN and infinities give no such norm).
        try:
            norm = math.hypot(*value.values())
        except (TypeError, OverflowError):  # not a number; an integer past the doubles (not from orjson)
            norm = None
        if norm is not None and norm < _SURELY_SHORT:
            return len(value), False
        if set(map(type, value.values())) <= _NUMBERS:
            if value and not (min(value.values()) > -_LONG and max(value.values()) < _LONG):
                return -1, False
            return len(value), False
    count, nested = 0, False
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            count += len(item)
            children: Any = item.values()
        elif type(item) is list:
            children = item
        else:
            if type(item) is float and not -_LONG < item < _LONG:
                return -1, nested
            continue
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append(child)
                nested = True
            elif kind is float and not -_LONG < child < _LONG:
                return -1, nested
    return count, nested
