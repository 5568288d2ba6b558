"""Checking a file against a phase's gold: the one check an upload, a scoring job and the output of
a hosted baseline all go through, so that what was accepted is exactly what gets scored."""

from __future__ import annotations

from typing import Any

from app.services.scoring.gold import ParsedGold
from app.services.submissions.limits import Limits
from scorers import unpack_submission


def validate(gold: ParsedGold, data: bytes, limits: Limits) -> Any:
    """The submission in ``data`` (a file, or a zip holding it, unpacked within ``limits``) parsed
    against the gold's public view (never its answers, so that no refusal can depend on them), ready
    for ``gold.scorer.compute``. Raises the scorer's ``ValidationError`` listing the problems (a bad
    zip is one of them)."""
    if gold.scorer.raw_submission:
        return gold.scorer.parse_raw(data, gold.public, max_bytes=limits.max_unzipped_bytes)
    content, _ = unpack_submission(data, max_bytes=limits.max_unzipped_bytes, max_entries=limits.max_zip_entries)
    return gold.scorer.parse_submission(content, gold.public)
