"""The keys of a phase that keep its board from being overfit: a private test split, final submissions, a freeze.

```yaml
private_share: 0.5        # this share of the scoring units is private until the phase is revealed
private_board: private    # after the reveal the board ranks by the private units (private) or all units (all)
final_submissions: 2      # each team marks up to 2 final submissions; the best of them on the private board counts
frozen_at: 2026-12-14T00:00Z  # after it the public board stops changing until the reveal
```

The units are those the scorer reports statistics for (documents, (language, document) groups, queries); which
are private is decided by a keyed hash of their ids (``scorers.split``), with a secret the server makes for the
phase when it is put online. A scorer that scores a submission as a whole (a scoring program) has no units to
split and refuses the key. ``final_submissions`` needs a private split (the public board ranks as ``selection``
says; the finals rank the private board). Each problem is reported under its key path.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from app.services.bundles.checks import key_path, kind
from scorers import Scorer
from scorers.split import PRIVATE_BOARDS, PrivateBoard

SPLIT_KEYS = ("private_share", "private_board", "final_submissions", "frozen_at")


class Checks(Protocol):
    def add(self, path: str, message: str) -> None: ...

    def choice(self, m: dict[str, Any], key: str, path: str, allowed: tuple[str, ...]) -> str: ...

    def positive(self, m: dict[str, Any], key: str, path: str) -> int | None: ...

    def time(self, m: dict[str, Any], key: str, path: str) -> datetime | None: ...


@dataclass(frozen=True)
class SplitKeys:
    """What a phase's bundle says of its private split: none (``private_share`` None) by default."""

    private_share: float | None = None
    private_board: PrivateBoard = "private"
    final_submissions: int | None = None
    frozen_at: datetime | None = None


def read_split(checks: Checks, m: dict[str, Any], path: str, scorer: Scorer[Any, Any, Any] | None) -> SplitKeys:
    """The phase's split keys, each problem added under its key path."""
    share = _share(checks, m, path)
    board: PrivateBoard = "private"
    if "private_board" in m:
        board = "all" if checks.choice(m, "private_board", path, PRIVATE_BOARDS) == "all" else "private"
        if share is None and "private_share" not in m:
            checks.add(key_path(path, "private_board"), "only a phase with a private_share has a private board")
    if share is not None and scorer is not None and not scorer.splittable:
        checks.add(
            key_path(path, "private_share"),
            f"{scorer.name} cannot keep units private: {scorer.unsplittable_because}; remove private_share",
        )
        share = None
    final = checks.positive(m, "final_submissions", path)
    if final is not None and "private_share" not in m:
        checks.add(
            key_path(path, "final_submissions"),
            "final submissions rank a private board: give the phase a private_share too",
        )
        final = None
    frozen_at = checks.time(m, "frozen_at", path)
    return SplitKeys(share, board, final, frozen_at)


def _share(checks: Checks, m: dict[str, Any], path: str) -> float | None:
    value = m.get("private_share")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        checks.add(
            key_path(path, "private_share"),
            f"expected a number strictly between 0 and 1 (the share of units kept private), found {kind(value)}",
        )
        return None
    return float(value)
