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
import stat
import threading
import zipfile
import zlib
from collections.abc import Iterator
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
    that is about two thirds of the reading time. Reference counting still frees memory.
    Nested and concurrent users share one counter, so the collector is enabled again when
    the last of them leaves, and only if it was enabled before the first came in.
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


def loads_strict(text: str) -> Any:
    """Parse one JSON text by SCORING.md's rules; raises ``ValueError`` with a located message."""
    try:
        return json.loads(
            text,
            object_pairs_hook=_object_without_repeats,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
        )
    except json.JSONDecodeError as exc:
        raise ValueError(f"line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})") from None
    except _Refused as exc:
        raise ValueError(str(exc)) from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal with tens of thousands of digits
        raise ValueError(f"not valid JSON ({exc})") from None


def load_json(data: bytes, error: type[ValidationError] = InvalidSubmission) -> Any:
    """Decode and parse a whole-file JSON document."""
    text = decode_text(data, error)
    if not text.strip():
        raise error([Problem("", "the file is empty; expected a JSON document")])
    try:
        with gc_paused():
            return loads_strict(text)
    except ValueError as exc:
        raise error([Problem("", str(exc))]) from None


def iter_json_lines(
    data: bytes, problems: Problems, error: type[ValidationError] = InvalidSubmission
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for every non-blank line; bad lines go to ``problems``."""
    text = decode_text(data, error)
    if not text.strip():
        raise error([Problem("", "the file is empty; expected one JSON object per line")])
    parsed: list[tuple[int, Any]] = []
    # Parsed eagerly so that the collector is paused for exactly the parse (see gc_paused).
    with gc_paused():
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                parsed.append((number, loads_strict(line)))
            except ValueError as exc:
                message = str(exc)
                if message.startswith("line 1, "):
                    message = message[len("line 1, ") :]
                problems.add(f"line {number}", message)
    yield from parsed


def read_tsv(data: bytes, error: type[ValidationError]) -> list[list[str]]:
    """Read a tab-separated file with double-quote quoting (fields may hold tabs and newlines)."""
    text = decode_text(data, error)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quotechar='"', strict=True)
    try:
        with gc_paused():
            return [row for row in reader if row]
    except csv.Error as exc:
        raise error([Problem(f"line {reader.line_num}", f"not a valid TSV row ({exc})")]) from None


def is_zip(data: bytes) -> bool:
    return data[:4] in ZIP_MAGICS


def _unsafe_name(name: str) -> str | None:
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
