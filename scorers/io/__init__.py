"""Reading gold and submission bytes: text decoding, strict JSON, JSON Lines, TSV and zip archives.

The rules are those of SCORING.md, "Files in general": UTF-8 (a leading byte-order mark is
ignored), JSON objects with a repeated key are refused, numbers that are NaN or overflow to
infinity are refused, blank lines in JSON Lines are ignored and CRLF endings are accepted.
Every refusal is a ``ValidationError`` of the kind given by the caller (gold or submission),
naming the line, column or key.

The package's modules, each one concept: ``text`` (decoding), ``collector`` (``gc_paused``),
``strict_json`` (one JSON document), ``json_object`` (a top-level object read member by member),
``plain_json`` (JSON Lines parsed by orjson where it gives the strict decoder's values),
``rows`` (JSON Lines, TSV, CSV), ``writing`` (the sample submissions' bytes), ``zipped`` (a
zipped submission) and ``memory`` (the memory of dropped files given back). The names callers use are all here.
"""

from __future__ import annotations

from scorers.io.collector import gc_paused
from scorers.io.json_object import JSON_OBJECT_WINDOW, iter_json_object
from scorers.io.memory import release_freed_memory
from scorers.io.rows import iter_delimited, iter_json_lines, iter_tsv, read_tsv
from scorers.io.strict_json import load_json, loads_strict, strict_decoder
from scorers.io.text import BOM, decode_text
from scorers.io.writing import delimited_bytes, json_bytes, json_lines_bytes
from scorers.io.zipped import (
    DEFAULT_MAX_UNZIPPED_BYTES,
    DEFAULT_MAX_ZIP_ENTRIES,
    ZIP_MAGICS,
    is_zip,
    unpack_submission,
)

__all__ = [
    "BOM",
    "DEFAULT_MAX_UNZIPPED_BYTES",
    "DEFAULT_MAX_ZIP_ENTRIES",
    "JSON_OBJECT_WINDOW",
    "ZIP_MAGICS",
    "decode_text",
    "delimited_bytes",
    "gc_paused",
    "is_zip",
    "iter_delimited",
    "iter_json_lines",
    "iter_json_object",
    "iter_tsv",
    "json_bytes",
    "json_lines_bytes",
    "load_json",
    "loads_strict",
    "read_tsv",
    "release_freed_memory",
    "strict_decoder",
    "unpack_submission",
]
