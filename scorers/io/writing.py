"""Writing the sample submissions (``Scorer.sample_submission``): JSON, JSON Lines and delimited bytes."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any


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
