"""Checks of parsed YAML values that report each problem under its key path.

``KeyPathChecker`` collects ``(key path, message)`` pairs instead of stopping at the first mistake,
so an organizer sees every problem of a bundle at once. Key paths read like the YAML they point
into: ``tasks[1].phases[0].ends_at``; the empty path is the document itself.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from difflib import get_close_matches
from typing import Any

#: Lowercase letters, digits and inner hyphens, at most 64 characters (slugs appear in addresses).
SLUG = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
TIME_SHAPE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
TIME_EXAMPLE = "2026-12-01T00:00Z"

#: Required keys and optional keys of one kind of mapping.
Keys = tuple[frozenset[str], frozenset[str]]

#: The largest whole number a setting may take (the database's integer columns are 32-bit).
MAX_WHOLE = 2**31 - 1


def key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def kind(value: Any) -> str:
    """How a YAML value reads to a person, for 'expected X, found Y' messages."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"true/false ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"text ({value[:40]!r})"
    if isinstance(value, list):
        return "a list"
    return "a mapping" if isinstance(value, dict) else type(value).__name__


def _time_problem(text: str, value: datetime) -> str | None:
    if value.tzinfo is None:
        return f"{text!r} has no time zone; write it in UTC with a final Z, e.g. {TIME_EXAMPLE}"
    if value.utcoffset() != timedelta(0):
        return f"{text!r} is not in UTC; convert it and end it with Z, e.g. {TIME_EXAMPLE}"
    if value.second or value.microsecond:
        return f"{text!r} has seconds; times are given to the minute, e.g. {TIME_EXAMPLE}"
    return None


class KeyPathChecker:
    """Typed reads of mapping values; each failed check records a problem and returns a neutral value."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append((path, message))

    def mapping(self, value: Any, path: str, keys: Keys) -> dict[str, Any] | None:
        """The mapping at ``path`` after checking that required keys are there and no unknown key is."""
        required, optional = keys
        if not isinstance(value, dict):
            self.add(path, f"expected a mapping, found {kind(value)}")
            return None
        known = required | optional
        for key in value:
            if not isinstance(key, str):
                self.add(path, f"keys are names, found {kind(key)}")
            elif key not in known:
                close = get_close_matches(key, known, n=1)
                hint = f"did you mean {close[0]}?" if close else f"known keys: {', '.join(sorted(known))}"
                self.add(key_path(path, key), f"unknown key ({hint})")
        for key in sorted(required - set(value)):
            self.add(key_path(path, key), "required key is missing")
        return value

    def items(self, m: dict[str, Any], key: str, path: str, *, required: bool = False) -> list[tuple[str, Any]]:
        """``(key path, item)`` for each entry of the list under ``key``; absent or null is an empty list."""
        value = m.get(key)
        where = key_path(path, key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.add(where, f"expected a list, found {kind(value)}")
            return []
        if required and not value:
            self.add(where, "expected at least one entry")
        return [(f"{where}[{i}]", item) for i, item in enumerate(value)]

    def text(
        self, m: dict[str, Any], key: str, path: str, *, optional: bool = False, max_length: int | None = None
    ) -> str:
        """The text under ``key``: a required one may not be blank, an optional one defaults to ''; no
        text may hold a NUL (``"\\0"`` in YAML) or be longer than ``max_length`` (where it is stored)."""
        value = m.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            self.add(key_path(path, key), f"expected text, found {kind(value)} (put it in quotes if it is text)")
            return ""
        if not optional and not value.strip():
            self.add(key_path(path, key), "may not be empty")
        if "\x00" in value:
            self.add(key_path(path, key), "contains a NUL character")
            return ""
        if max_length is not None and len(value) > max_length:
            self.add(key_path(path, key), f"at most {max_length} characters, found {len(value)}")
            return ""
        return value

    def slug(self, m: dict[str, Any], path: str, taken: dict[str, str]) -> str:
        """The ``slug`` under ``path``, unique among ``taken`` (slug -> key path of its owner)."""
        value = self.text(m, "slug", path)
        where = key_path(path, "slug")
        if value and not SLUG.fullmatch(value):
            self.add(where, f"{value!r} is not a slug (lowercase letters, digits and inner hyphens, at most 64)")
        elif value in taken:
            self.add(where, f"{value!r} is already the slug of {taken[value] or 'the competition'}")
        elif value:
            taken[value] = path
        return value

    def choice(self, m: dict[str, Any], key: str, path: str, allowed: tuple[str, ...]) -> str:
        """One of ``allowed``; the first is the default."""
        value = m.get(key)
        if value is None:
            return allowed[0]
        if value not in allowed:
            self.add(key_path(path, key), f"expected one of {', '.join(allowed)}; found {kind(value)}")
            return allowed[0]
        return str(value)

    def flag(self, m: dict[str, Any], key: str, path: str, *, default: bool = False) -> bool:
        """``true`` or ``false``; ``default`` when not given."""
        value = m.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.add(key_path(path, key), f"expected true or false, found {kind(value)}")
            return default
        return value

    def positive(self, m: dict[str, Any], key: str, path: str) -> int | None:
        """A whole number of at least 1, or None when not given."""
        value = m.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.add(key_path(path, key), f"expected a whole number of at least 1, found {kind(value)}")
            return None
        if value > MAX_WHOLE:
            # The columns are 32-bit integers on PostgreSQL: a larger number is refused here, not by the database.
            self.add(key_path(path, key), f"expected a whole number of at most {MAX_WHOLE}, found {value}")
            return None
        return value

    def time(self, m: dict[str, Any], key: str, path: str) -> datetime | None:
        """An ISO 8601 time in UTC to the minute (``2026-12-01T00:00Z``), or None when not given."""
        value = m.get(key)
        where = key_path(path, key)
        if value is None:
            return None
        if not isinstance(value, str) or not TIME_SHAPE.fullmatch(value):
            self.add(where, f"expected an ISO 8601 UTC time such as {TIME_EXAMPLE}, found {kind(value)}")
            return None
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError as exc:
            self.add(where, f"{value!r} is not a valid time ({exc})")
            return None
        problem = _time_problem(value, parsed)
        if problem:
            self.add(where, problem)
            return None
        return parsed.astimezone(UTC)
