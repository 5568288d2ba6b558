"""Reading gold and submission bytes: text decoding, strict JSON, JSON Lines, TSV and zip archives.

The rules are those of SCORING.md, "Files in general": UTF-8 (a leading byte-order mark is
ignored), JSON objects with a repeated key are refused, numbers that are NaN or overflow to
infinity are refused, blank lines in JSON Lines are ignored and CRLF endings are accepted.
Every refusal is a ``ValidationError`` of the kind given by the caller (gold or submission),
naming the line, column or key.
"""

from __future__ import annotations

import contextlib
import csv
import gc
import io
import json
import lzma
import math
import posixpath
import re
import stat
import threading
import zipfile
import zlib
from _json import scanstring  # what json's own object parser reads keys with (json.decoder has it untyped)
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import Any

from scorers.errors import InvalidSubmission, Problem, Problems, ValidationError

BOM = b"\xef\xbb\xbf"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
#: Upper bounds for a zipped submission; the server passes its own, smaller ones.
DEFAULT_MAX_UNZIPPED_BYTES = 2 * 1024**3
DEFAULT_MAX_ZIP_ENTRIES = 64
#: Files that archivers add on their own and that are never the submission.
_ZIP_JUNK_PREFIXES = ("__MACOSX/",)
_ZIP_JUNK_NAMES = (".DS_Store", "Thumbs.db")


_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large file is turned into objects.

    Parsing allocates millions of containers and none of them form cycles, yet each
    allocation burst triggers a full collection pass: on the 100x inputs of PERFORMANCE.md
    that is about two thirds of the reading time. The pause must cover the whole parse, not
    only ``json.loads``: the tuples and records built from the parsed values right after it
    would make the collector walk everything parsed so far, again and again. Reference
    counting still frees memory. Nested and concurrent users share one counter, so the
    collector is enabled again when the last of them leaves, and only if it was enabled
    before the first came in. ``@gc_paused()`` also works as a function decorator.
    """
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()


class _Refused(ValueError):
    """Raised inside the JSON decoder hooks; turned into a Problem by the caller."""


def decode_text(data: bytes, error: type[ValidationError] = InvalidSubmission) -> str:
    """Decode UTF-8, dropping one leading byte-order mark; refuse anything else."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error([Problem(f"line {line}, byte {exc.start}", "is not UTF-8 text (save the file as UTF-8)")]) from None


def _object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"key {key!r} appears more than once in one object")
            seen.add(key)
    return obj


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Refused(f"the number {text[:40]} is too large (it overflows to infinity)")
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


def _json_message(exc: ValueError | RecursionError) -> str:
    """The message for what the strict decoder raised: where (for a syntax error) and what."""
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})"
    if isinstance(exc, _Refused):
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
        raise ValueError(_json_message(exc)) from None


def _blank(text: str) -> bool:
    # Same as ``not text.strip()``, without copying the text.
    return not text or text.isspace()


def load_json(data: bytes, error: type[ValidationError] = InvalidSubmission) -> Any:
    """Decode and parse a whole-file JSON document."""
    text = decode_text(data, error)
    if _blank(text):
        raise error([Problem("", "the file is empty; expected a JSON document")])
    try:
        with gc_paused():
            return loads_strict(text)
    except ValueError as exc:
        raise error([Problem("", str(exc))]) from None


#: JSON's white space, as ``json.decoder.WHITESPACE``, in text and in bytes.
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_JSON_SPACE_BYTES = re.compile(rb"[ \t\n\r]*")
#: Characters of a file's text decoded at a time by ``iter_json_object`` (a window grows to hold a larger member).
JSON_OBJECT_WINDOW = 1 << 24


def _skip_space(text: str, index: int) -> int:
    match = _JSON_SPACE.match(text, index)
    return match.end() if match else index


def iter_json_object(
    data: bytes,
    not_object: Callable[[Any], ValidationError],
    error: type[ValidationError] = InvalidSubmission,
    *,
    finite: bool = True,
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
    (``strict_decoder``).
    """
    decoder = strict_decoder(finite=finite)
    offset = len(BOM) if data.startswith(BOM) else 0
    start = _skip_space_bytes(data, offset)
    if data.startswith(b"{", start):
        members = _Members()
        try:
            position, first, closed = yield from _windowed_members(data, start + 1, decoder, members)
            if closed and _skip_space_bytes(data, position + 1) == len(data):
                members.check_repeats()
                return
            # Every byte before ``position`` is ASCII: past the byte-order mark, the same index in the text.
            text = decode_text(data, error)
            yield from _object_members(text, position - offset, decoder, members, first=first, closed=closed)
        except (ValueError, RecursionError) as exc:
            raise error([Problem("", _json_message(exc))]) from None
        return
    text = decode_text(data, error)
    if _blank(text):
        raise error([Problem("", "the file is empty; expected a JSON document")])
    try:
        value = loads_strict(text, decoder)
    except ValueError as exc:
        raise error([Problem("", str(exc))]) from None
    raise not_object(value)


def _skip_space_bytes(data: bytes, index: int) -> int:
    match = _JSON_SPACE_BYTES.match(data, index)
    return match.end() if match else index


class _Members:
    """The top-level keys read so far by ``iter_json_object``, and the first one repeated."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.repeated: str | None = None

    def add(self, key: str) -> None:
        if key not in self.seen:
            self.seen.add(key)
        elif self.repeated is None:
            self.repeated = key

    def check_repeats(self) -> None:
        """Raise for a repeated key, as the object hook of the whole parse does when the object closes."""
        if self.repeated is not None:
            raise _Refused(f"key {self.repeated!r} appears more than once in one object")


def _windowed_members(
    data: bytes, position: int, decoder: json.JSONDecoder, members: _Members
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
    while True:
        end = min(position + width, size)
        try:
            text = str(view[position:end], "ascii")
        except UnicodeDecodeError:
            return position, first, False
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
                value, cursor = decoder.raw_decode(text, _skip_space(text, cursor + 1))
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
        if _blank(line):
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


# -- writing: the sample submissions (``Scorer.sample_submission``) ------------------------------------------


def json_bytes(value: Any) -> bytes:
    """``value`` as one UTF-8 JSON document, a newline at the end."""
    return (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8")


def json_lines_bytes(values: Iterable[Any]) -> bytes:
    """One JSON document per line, UTF-8."""
    return "".join(json.dumps(value, ensure_ascii=False) + "\n" for value in values).encode("utf-8")


def delimited_bytes(rows: Iterable[Sequence[Any]], delimiter: str) -> bytes:
    """Rows as a delimited file (TSV, CSV) with the double-quote quoting ``iter_delimited`` reads back."""
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, quotechar='"', lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")


def read_tsv(data: bytes, error: type[ValidationError]) -> list[list[str]]:
    """The non-empty rows of a tab-separated file (see ``iter_tsv``)."""
    with gc_paused():
        return [row for _, row in iter_tsv(data, error)]


def is_zip(data: bytes) -> bool:
    return data[:4] in ZIP_MAGICS


def _unsafe_name(name: str) -> str | None:
    if not name:  # zipfile itself fails on it (is_dir reads the last character)
        return "an empty name"
    if "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "an absolute or Windows path"
    if ".." in name.split("/"):
        return "a '..' path component"
    if "\x00" in name:
        return "a NUL character in its name"
    return None


def unpack_submission(
    data: bytes,
    *,
    max_bytes: int = DEFAULT_MAX_UNZIPPED_BYTES,
    max_entries: int = DEFAULT_MAX_ZIP_ENTRIES,
) -> tuple[bytes, str | None]:
    """Return the submission file's bytes and, for a zip archive, the name of the file inside.

    A zip must hold exactly one file (folders and the ``__MACOSX`` entries archivers add are
    ignored). Refused: more than ``max_entries`` entries, links, encrypted entries, names that
    leave the archive (absolute paths, ``..``), and content that decompresses past
    ``max_bytes`` (the declared size is checked first, then the real size while reading, so a
    lying header cannot inflate past the bound).
    """
    if not is_zip(data):
        return data, None

    def refuse(message: str) -> InvalidSubmission:
        return InvalidSubmission([Problem("zip archive", message)])

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, NotImplementedError) as exc:
        # NotImplementedError: an entry that declares a zip version newer than zipfile reads.
        raise refuse(f"cannot be read ({exc})") from None
    if len(infos) > max_entries:
        raise refuse(f"holds {len(infos)} entries; at most {max_entries} are accepted")
    files = []
    for info in infos:
        reason = _unsafe_name(info.filename)
        if reason:
            raise refuse(f"entry {info.filename!r} has {reason}")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise refuse(f"entry {info.filename!r} is a symbolic link")
        if info.is_dir() or info.filename.startswith(_ZIP_JUNK_PREFIXES):
            continue
        base = posixpath.basename(info.filename)
        if base in _ZIP_JUNK_NAMES or base.startswith("._"):
            continue
        files.append(info)
    if len(files) != 1:
        names = ", ".join(repr(i.filename) for i in files[:5])
        found = f"{len(files)} files" + (f" ({names})" if files else "")
        raise refuse(f"must hold exactly one submission file; it holds {found}")
    (info,) = files
    if info.flag_bits & 0x1:
        raise refuse(f"entry {info.filename!r} is encrypted")
    if info.file_size > max_bytes:
        raise refuse(f"entry {info.filename!r} unpacks to {info.file_size} bytes; the limit is {max_bytes}")
    out = bytearray()
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(1 << 20):
                out += chunk
                if len(out) > max_bytes:
                    raise refuse(f"entry {info.filename!r} unpacks to more than {max_bytes} bytes")
    except (zipfile.BadZipFile, NotImplementedError, EOFError, OSError, ValueError, zlib.error, lzma.LZMAError) as exc:
        # zlib and lzma raise their own errors on a damaged stream (bz2 raises OSError).
        raise refuse(f"entry {info.filename!r} cannot be unpacked ({exc})") from None
    except RuntimeError as exc:  # zipfile raises this for encrypted entries
        raise refuse(f"entry {info.filename!r} cannot be unpacked ({exc})") from None
    return bytes(out), info.filename
