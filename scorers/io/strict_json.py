"""Strict JSON: SCORING.md's rules for a JSON document (repeated keys, NaN and overflowing numbers refused).

``load_json`` reads a whole-file document, ``loads_strict`` one text; both refuse with a located message.
"""

from __future__ import annotations

import json
import math
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
