"""Size limits: the ``max_...`` options that refuse absurd but well-formed files before any scoring.

A contest file can be valid JSON and still hold a million candidates for one query, a role with
100,000 fillers or a label of ten megabytes, and some steps of the seed scorers do work that grows
faster than such a part (pairs of fillers, tokens times tokens). Each scorer declares a limit for
every such part as an option whose default is far above what the real data holds (the scorer's
docstring gives the measured maxima), and ``parse_submission`` refuses a file beyond one with a
message that names the place, the count, the limit and the option. The server thus answers such an
upload at once, and scoring never runs for minutes; an organizer whose data is larger raises the
option. A submission's limits are measured on the submission alone (the secrecy rule: a count that
involves the gold would tell participants something about the answers); limits on the gold are
checked when the organizers' gold is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Self

from scorers.base import OptionSpec
from scorers.errors import OptionsError

PREFIX = "max_"


def bound(default: int, meaning: str) -> int:
    """A field of a ``SizeLimits`` class: its default and what it bounds (the option's meaning)."""
    return field(default=default, metadata={"meaning": meaning})


@dataclass(frozen=True)
class SizeLimits:
    """Base of a scorer's limits: each field ``x`` (declared with ``bound``) is the option ``max_x``."""

    @classmethod
    def options(cls) -> tuple[OptionSpec, ...]:
        return tuple(OptionSpec(PREFIX + f.name, f.default, f.metadata["meaning"]) for f in fields(cls))

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Self:
        """The limits a scorer's resolved options (``Scorer.config``) set."""
        return cls(**{f.name: config[PREFIX + f.name] for f in fields(cls)})

    def exceeded(self, name: str, count: int, unit: str) -> str:
        """The message for a part beyond the limit ``name``: ``120000 fillers; at most 1000 are accepted (option
        max_fillers_per_role)``."""
        return f"{count} {unit}; at most {getattr(self, name)} are accepted (option {PREFIX}{name})"


def check_limit(scorer: str, name: str, value: Any) -> Any:
    """Refuse a limit option that is not a positive integer (its type was checked against the default)."""
    if name.startswith(PREFIX) and type(value) is int and value < 1:
        raise OptionsError(f"option {name!r} of {scorer} must be a positive integer, not {value}")
    return value
