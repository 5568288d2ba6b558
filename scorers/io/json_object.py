"""Reading a file whose top level is one JSON object member by member (``iter_json_object``).

The same file as ``load_json`` reads it, refused with the same messages, without holding its whole text or
parsed object.
"""

from __future__ import annotations

import json
import re
from _json import scanstring  # what json's own object parser reads keys with (json.decoder has it untyped)
from collections.abc import Callable, Generator, Iterator, Mapping
from itertools import repeat
from typing import Any

from scorers.errors import InvalidSubmission, Problem, ValidationError
from scorers.io.strict_json import MISSING, Refused, json_message, loads_strict, plain_loads, strict_decoder
from scorers.io.text import BOM, decode_text, is_blank

#: JSON's white space, as ``json.decoder.WHITESPACE``, in text and in bytes.
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_JSON_SPACE_BYTES = re.compile(rb"[ \t\n\r]*")
#: Characters of a file's text decoded at a time by ``iter_json_object`` (a window grows to hold a larger member).
JSON_OBJECT_WINDOW = 1 << 18
#: Files of this many bytes or more have the colons of their objects counted by numpy (``_colon_counter``), whose
#: import is then a small part of reading them.
NUMPY_COLONS = 1 << 25


def _skip_space(text: str, index: int) -> int:
    match = _JSON_SPACE.match(text, index)
    return match.end() if match else index


def iter_json_object(
    data: bytes,
    not_object: Callable[[Any], ValidationError],
    error: type[ValidationError] = InvalidSubmission,
    *,
    finite: bool = True,
    keys: KeyBound | None = None,
    positions: Mapping[str, int] | None = None,
) -> Iterator[tuple[str, Any]]:
    """Yield the ``(key, value)`` pairs of a file whose top level is one JSON object, one pair at a time.

    The same file as ``load_json`` reads it, refused with the same messages, but a caller that keeps only
    part of each value (a run pruned to its top candidates) never holds the whole parsed object, nor the
    file's whole text: ASCII (what JSON writers give by default) is decoded ``JSON_OBJECT_WINDOW`` characters
    at a time (``_windowed_members``). Where a window meets a byte that is not ASCII, a member that is not
    valid JSON or text after the object, the whole text is decoded and read on from there as before, so every
    refusal is the one of the whole parse, at the same line and column. The refusals of the whole parse come
    first, as there: a file that is not UTF-8, a syntax error anywhere in the file, then a key repeated at the
    top level (found when the object closes), then text after it; the pairs before a refusal may have been
    handed over, so a caller collects its own problems until the last pair. A top level that is not an object
    is parsed whole and refused with ``not_object(value)``. The caller pauses the collector over its loop
    (``gc_paused``). ``finite=False``: numbers that overflow come as infinities, for the caller to refuse
    (``strict_decoder``). ``keys``: see ``KeyBound``. ``positions``: the keys a caller expects, each with its own
    index from 0 (a gold's ids): a key among them is checked for a repeat by a byte at its index, not held in a set
    (a file of many keys: the set and the keys' copies were a third of a FAMuS submission's parsed size).
    """
    decoder = strict_decoder(finite=finite)
    keys = keys or KeyBound(-1)
    offset = len(BOM) if data.startswith(BOM) else 0
    start = _skip_space_bytes(data, offset)
    if data.startswith(b"{", start):
        members = _Members(positions)
        try:
            position, first, closed = yield from _windowed_members(data, start + 1, decoder, members, keys)
            if closed and _skip_space_bytes(data, position + 1) == len(data):
                members.check_repeats()
                return
            # Every byte before ``position`` is ASCII: past the byte-order mark, the same index in the text.
            text = decode_text(data, error)
            keys.short = False
            yield from _object_members(text, position - offset, decoder, members, first=first, closed=closed)
        except (ValueError, RecursionError) as exc:
            raise error([Problem("", json_message(exc))]) from None
        return
    text = decode_text(data, error)
    if is_blank(text):
        raise error([Problem("", "the file is empty; expected a JSON document")])
    try:
        value = loads_strict(text, decoder)
    except ValueError as exc:
        raise error([Problem("", str(exc))]) from None
    raise not_object(value)


def _skip_space_bytes(data: bytes, index: int) -> int:
    match = _JSON_SPACE_BYTES.match(data, index)
    return match.end() if match else index


class KeyBound:
    """Asked of ``iter_json_object``: whether every key of the object handed over last is at most ``chars``
    characters long, where the text says so at little cost (``short``: True), without touching its keys.

    Only a flat object read by orjson is vouched for (``plain_loads``, whose colon count leaves no colon inside a
    string of its text). A key's text is never shorter than the key (the window is ASCII; an escape writes one
    character or two with two or more), so a key of ``chars + 1`` characters or more lies in a run without a
    colon of at least ``chars + 4`` characters from the object's ``{`` (the first key: ``{``, its quotes) or of
    ``chars + 5`` after the colon of the member before it (that member's value, a character at least, a ``,`` and
    the key's quotes). Each holds one of the windows of ``(chars + 6) // 2`` characters, as far apart, that start
    at the object's ``{`` (a run of ``2 * width - 1`` characters holds one wherever it lies); so when each of them
    holds a colon (``str.find``, one call a window), no key is longer. It is the widest window that says so: one
    character wider, a key of ``chars + 1`` characters can be placed to hold none, and at this width a key of
    ``chars`` (an even limit) or ``chars - 1`` characters is vouched for where it lies between two windows.
    ``short`` False says nothing: the caller measures the keys itself.
    """

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self.short = False

    def check(self, text: str, start: int, end: int) -> None:
        """Vouch for the object ``plain_loads`` read from ``text[start:end]`` where its text allows."""
        if self.chars < 0:
            return
        width = (self.chars + 6) // 2
        self.short = -1 not in map(
            text.find, repeat(":"), range(start, end - width + 1, width), range(start + width, end + 1, width)
        )


class _Members:
    """The top-level keys read so far by ``iter_json_object``, and the first one repeated."""

    def __init__(self, positions: Mapping[str, int] | None = None) -> None:
        self.seen: set[str] = set()
        self.repeated: str | None = None
        self.positions = positions or {}
        self.marks = bytearray(len(self.positions))  # a key of ``positions``: read once

    def add(self, key: str) -> None:
        index = self.positions.get(key)
        if index is not None:
            if not self.marks[index]:
                self.marks[index] = 1
            elif self.repeated is None:
                self.repeated = key
            return
        if key not in self.seen:
            self.seen.add(key)
        elif self.repeated is None:
            self.repeated = key

    def check_repeats(self) -> None:
        """Raise for a repeated key, as the object hook of the whole parse does when the object closes."""
        if self.repeated is not None:
            raise Refused(f"key {self.repeated!r} appears more than once in one object")


def _windowed_members(
    data: bytes, position: int, decoder: json.JSONDecoder, members: _Members, keys: KeyBound
) -> Generator[tuple[str, Any], None, tuple[int, bool, bool]]:
    """The members of the object whose ``{`` ends before byte ``position``, read from windows of ASCII text.

    Written by hand because the standard library parses only whole texts, and a window of ASCII because
    then a character's index is its byte's. A member is handed over only when its key, its value and the
    ``,`` or ``}`` after it lie inside the window: a value read from a window is then exactly the value the
    whole text holds there (a number cut at the window's end is followed by nothing). A member that does not
    fit starts the next window, twice as wide if it already started this one. Returns ``(position, first,
    closed)``: the byte of the object's ``}`` (``closed``), or else where to read on in the whole text, just
    after the ``{`` (``first``) or a ``,``: at a byte that is not ASCII, or at a member that is not valid
    JSON even in a window that reaches the end of the file.
    """
    view = memoryview(data)
    size, width, first = len(data), JSON_OBJECT_WINDOW, True
    codes = _bytes_array(data) if size >= NUMPY_COLONS else None
    while True:
        end = min(position + width, size)
        try:
            text = str(view[position:end], "ascii")
        except UnicodeDecodeError:
            return position, first, False
        colons = None if codes is None else _colon_counter(codes, position)
        index = 0  # where the member being read starts: just after the "{" or a ","
        while True:
            cursor = _skip_space(text, index)
            if first and text.startswith("}", cursor):
                return position + cursor, first, True
            try:
                if not text.startswith('"', cursor):
                    break
                key, cursor = scanstring(text, cursor + 1, True)
                cursor = _skip_space(text, cursor)
                if not text.startswith(":", cursor):
                    break
                cursor = _skip_space(text, cursor + 1)
                value, cursor = _value(text, cursor, decoder, keys, colons)
            except (ValueError, RecursionError):
                break
            cursor = _skip_space(text, cursor)
            if not text.startswith((",", "}"), cursor):
                break
            members.add(key)
            yield key, value
            first = False
            if text.startswith("}", cursor):
                return position + cursor, first, True
            index = cursor + 1
        if end == size:
            return position + index, first, False
        width = width * 2 if index == 0 else JSON_OBJECT_WINDOW
        position += index


def _bytes_array(data: bytes) -> Any:
    import numpy as np

    return np.frombuffer(data, np.uint8)


def _colon_counter(codes: Any, position: int) -> Callable[[int, int], int]:
    """The colons of ``text[start:end]`` of the window whose text starts at byte ``position`` of the file (ASCII: a
    character's index is its byte's), counted in the file's bytes by numpy: about half the time of ``str.count``,
    which compares them one at a time."""

    from numpy import count_nonzero

    def colons(start: int, end: int) -> int:
        return int(count_nonzero(codes[position + start : position + end] == _COLON))

    return colons


_COLON = ord(":")


def _value(
    text: str, index: int, decoder: json.JSONDecoder, keys: KeyBound, colons: Callable[[int, int], int] | None = None
) -> tuple[Any, int]:
    """The value at ``index`` and the index after it, as ``decoder.raw_decode`` reads it (a ``ValueError`` where it
    fails).

    An object is first tried with orjson (``plain_loads``) up to its first ``}``: a flat object (a Task 2 run's
    candidates) ends there, and text that is not a whole object up to that ``}`` (a nested object, a ``}`` in a
    string) is no JSON at all, so orjson cannot read a wrong value from it. The decoder reads the rest. Sets
    ``keys.short`` for the value (``KeyBound``).
    """
    keys.short = False
    if text.startswith("{", index):
        end = text.find("}", index) + 1
        if not end:
            # No object closes in the text: the decoder would fail too, after counting the lines of the whole window
            # for its message (two passes over 16 million characters at the end of every window), which is not read.
            raise ValueError("no object ends in the window")
        value = plain_loads(text, index, end, colons=colons)
        if value is not MISSING:
            keys.check(text, index, end)
            return value, end
    return decoder.raw_decode(text, index)


def _object_members(
    text: str, index: int, decoder: json.JSONDecoder, members: _Members, *, first: bool, closed: bool = False
) -> Iterator[tuple[str, Any]]:
    """The members of the object from ``index``, just after its ``{`` (``first``) or a ``,`` (or at its ``}``:
    ``closed``), then the checks after it.

    Written by hand because the standard library parses an object only whole. It follows
    ``_parse_object_unicode`` of CPython's ``_json`` step by step, so that every error is the one
    ``json.loads`` raises, at the same place; keys are read by the same ``scanstring``, values by the
    same decoder.
    """
    index = _skip_space(text, index)
    closed = closed or (first and text.startswith("}", index))
    while not closed:
        if not text.startswith('"', index):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, index)
        key, index = scanstring(text, index + 1, True)
        index = _skip_space(text, index)
        if not text.startswith(":", index):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, index)
        value, index = decoder.raw_decode(text, _skip_space(text, index + 1))
        members.add(key)
        yield key, value
        index = _skip_space(text, index)
        closed = text.startswith("}", index)
        if not closed:
            if not text.startswith(",", index):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, index)
            index = _skip_space(text, index + 1)
    members.check_repeats()
    index = _skip_space(text, index + 1)
    if index != len(text):
        raise json.JSONDecodeError("Extra data", text, index)
