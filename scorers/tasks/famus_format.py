"""Reading FAMuS files: what the readers share (the frame key, the wording of places and values in messages).

The readers only validate and build typed values; ``scorers.tasks.famus`` (CDAE) and ``scorers.tasks.famus_sv``
(source validation) state the formats and refusals and score them. Every problem is collected with its place (line,
document, template, role, filler) and what was expected. The readers: ``famus_gold`` (CDAE gold lines),
``famus_submission`` (predicted templates, checked against ``famus_limits``' limits and cost budgets before any
clean-up) and ``famus_sv_format`` (source validation's release lines and labels). Submissions are validated against
the public view, never against templates or labels.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from sys import intern
from typing import Any

from scorers.errors import Problems

FRAME_KEY = "incident_type"
GOLD_BOOKKEEPING_KEYS = frozenset({FRAME_KEY, "template-spans"})


def quote(text: str, limit: int = 80) -> str:
    """A JSON-quoted, shortened string for messages (escapes anything unprintable)."""
    return json.dumps(text if len(text) <= limit else text[:limit] + "...")


def show(value: Any) -> str:
    """A short JSON rendering of a value for messages."""
    try:
        text = json.dumps(value)
    except (RecursionError, ValueError):  # nested too deeply to print; the type says enough
        return f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:40] + "..."


#: A place in the file, worded only when a problem is reported there: wording one (JSON-quoting a docid or a
#: role) for every template would cost more than reading it.
Place = Callable[[], str]


def document(docid: str) -> str:
    return f"document {quote(docid)}"


def template_frame(raw: Any, where: Place, problems: Problems, shape: str) -> str | None:
    """The frame of a template, or None (reported) when ``raw`` is not an object (``shape`` says which) or has
    no string frame."""
    if not isinstance(raw, dict):
        problems.add(where(), f"a template must be {shape}, not {show(raw)}")
        return None
    frame = raw.get(FRAME_KEY)
    if not isinstance(frame, str):
        problems.add(where(), f"the template needs a string {quote(FRAME_KEY)} (the frame)")
        return None
    # Frames and role names recur in every document, each parsed as a new string: one copy of each is kept.
    return intern(frame)
