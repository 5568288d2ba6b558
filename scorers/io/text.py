"""Decoding a file's bytes as text by SCORING.md's rules: UTF-8, one leading byte-order mark dropped."""

from __future__ import annotations

from scorers.errors import InvalidSubmission, Problem, ValidationError

BOM = b"\xef\xbb\xbf"


def decode_text(data: bytes, error: type[ValidationError] = InvalidSubmission) -> str:
    """Decode UTF-8, dropping one leading byte-order mark; refuse anything else."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error([Problem(f"line {line}, byte {exc.start}", "is not UTF-8 text (save the file as UTF-8)")]) from None


def is_blank(text: str) -> bool:
    # Same as ``not text.strip()``, without copying the text.
    return not text or text.isspace()
