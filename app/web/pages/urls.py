"""Paths of the pages, built in one place (slugs are quoted, so any slug makes a valid path)."""

from __future__ import annotations

from urllib.parse import quote, urlencode

PhaseRef = tuple[str, str, str]


def competition(slug: str) -> str:
    return f"/c/{quote(slug, safe='')}"


def team(slug: str) -> str:
    return f"{competition(slug)}/team"


def phase(ref: PhaseRef) -> str:
    """The phase's leaderboard page, the phase's home."""
    c, t, p = ref
    return f"{competition(c)}/{quote(t, safe='')}/{quote(p, safe='')}"


def phase_part(ref: PhaseRef, part: str) -> str:
    """A page or file under the phase: ``submit``, ``submissions``, ``organize``, ``leaderboard.csv``..."""
    return f"{phase(ref)}/{part}"


def api_phase(ref: PhaseRef, part: str) -> str:
    """A resource of the phase in the JSON API (``sample``, ``leaderboard``)."""
    c, t, p = (quote(slug, safe="") for slug in ref)
    return f"/api/v1/competitions/{c}/tasks/{t}/phases/{p}/{part}"


def submission(submission_id: int, part: str = "") -> str:
    base = f"/submissions/{submission_id}"
    return f"{base}/{part}" if part else base


def login(next_path: str = "") -> str:
    return "/login" + (f"?{urlencode({'next': next_path})}" if next_path else "")


def safe_next(value: str | None, default: str = "/") -> str:
    """Where to go after logging in: only a path on this site (``//host`` or ``http:`` would leave it)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return default
    return value
