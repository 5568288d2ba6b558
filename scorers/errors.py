"""Errors raised by the scorer library.

Hierarchy::

    ScorerError                 anything the scorer library refuses
    ├── ValidationError         a gold or submission file that cannot be scored
    │   ├── InvalidGold
    │   └── InvalidSubmission
    ├── OptionsError            scorer options that are unknown or of the wrong type
    ├── NoSample                a scorer that cannot build a sample submission from public inputs
    └── UnknownScorer           a name that is not in the registry

A ``ValidationError`` carries the list of problems, each naming its place (line, key) and
what was expected. At most ``MAX_LISTED`` problems are kept; the rest are only counted, so a
file with a million bad lines costs no more memory than one with twenty.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAX_LISTED = 20


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file: where it is and what was expected."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class ScorerError(Exception):
    """Base class of every refusal the scorer library raises."""


class OptionsError(ScorerError):
    """Scorer options that are unknown or have the wrong type.

    ``key`` is the place in the options the refusal is about (``measures[2]``, ``relevance_level``), or None for
    the whole block; the text of the error (``detail``) does not repeat it, ``located`` puts it first.
    """

    def __init__(self, detail: str, key: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.key = key

    @property
    def located(self) -> str:
        """``measures[2]: unknown trec_eval measure 'mapp'``: the message under its key."""
        return f"{self.key}: {self.detail}" if self.key else self.detail


class NoSample(ScorerError):
    """A scorer that cannot build a sample submission from the public inputs alone (its message says why)."""


class UnknownScorer(ScorerError):
    """A scorer name that is not in the registry."""


class ValidationError(ScorerError):
    """A file that cannot be scored; ``problems`` lists the first ones, ``total`` counts all."""

    what = "file"

    def __init__(self, problems: Iterable[Problem], total: int | None = None) -> None:
        listed = list(problems)[:MAX_LISTED]
        self.problems: list[Problem] = listed
        self.total: int = max(total if total is not None else len(listed), len(listed))
        super().__init__(self.summary())

    def summary(self) -> str:
        n = self.total
        head = f"The {self.what} was refused: {n} problem{'s' if n != 1 else ''}."
        lines = [head, *(f"- {p}" for p in self.problems)]
        if n > len(self.problems):
            lines.append(f"... and {n - len(self.problems)} more")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {
            "error": f"invalid {self.what}",
            "total": self.total,
            "problems": [{"where": p.where, "message": p.message} for p in self.problems],
        }


class InvalidGold(ValidationError):
    what = "gold file"


class InvalidSubmission(ValidationError):
    what = "submission"


class Problems:
    """Collects problems while a file is read; keeps the first ``MAX_LISTED`` and counts all.

    Parsers add every problem they find and call ``raise_if_any`` at the end of a pass, so a
    participant sees many mistakes at once instead of fixing them one upload at a time.
    """

    def __init__(self, error: type[ValidationError]) -> None:
        self._error = error
        self.listed: list[Problem] = []
        self.total = 0

    def add(self, where: str, message: str) -> None:
        self.total += 1
        if len(self.listed) < MAX_LISTED:
            self.listed.append(Problem(where, message))

    def __bool__(self) -> bool:
        return self.total > 0

    @property
    def full(self) -> bool:
        """True once enough problems are listed that scanning further only counts them."""
        return self.total >= MAX_LISTED

    def error(self) -> ValidationError:
        return self._error(self.listed, self.total)

    def raise_if_any(self) -> None:
        if self.total:
            raise self.error()
