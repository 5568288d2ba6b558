"""A phase's further boards (``boards``): each its name, metrics, slice of the units and ranking.

```yaml
boards:
  - name: german                 # its address: .../boards/german (lower-case letters, digits, dashes)
    title: German documents      # optional; the name by default
    metrics: [f1, precision]     # what it shows, in order; metrics of the task's scorer
    slice: {language: de}        # optional: the values on one part the scorer breaks its score down by
    ranking: metric              # metric (by: one of metrics, default the first), mean_of_ranks or rank_of_ranks
```

What each ranking means: ``leaderboard.multi``. Every problem is reported under its key path.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from app.services.bundles.checks import key_path, kind
from leaderboard.multi import RANKINGS, BoardSpec, Ranking
from scorers import Scorer

BOARD_KEYS = frozenset({"name", "title", "metrics", "slice", "ranking", "by"})
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
MAX_TITLE = 200


class Checks(Protocol):
    def add(self, path: str, message: str) -> None: ...

    def items(self, m: dict[str, Any], key: str, path: str, *, required: bool = False) -> list[tuple[str, Any]]: ...


def read_boards(
    checks: Checks, m: dict[str, Any], path: str, scorer: Scorer[Any, Any, Any] | None
) -> tuple[BoardSpec, ...]:
    """The phase's further boards, each problem added under its key path."""
    out: list[BoardSpec] = []
    names: set[str] = set()
    for where, item in checks.items(m, "boards", path):
        board = _board(checks, where, item, scorer)
        if board is None:
            continue
        if board.name in names:
            checks.add(key_path(where, "name"), f"another board is named {board.name!r}")
            continue
        names.add(board.name)
        out.append(board)
    return tuple(out)


def _board(checks: Checks, where: str, item: Any, scorer: Scorer[Any, Any, Any] | None) -> BoardSpec | None:
    if not isinstance(item, dict):
        checks.add(where, f"expected a mapping, found {kind(item)}")
        return None
    problems = 0

    def add(key: str, message: str) -> None:
        nonlocal problems
        problems += 1
        checks.add(key_path(where, key) if key else where, message)

    for key in sorted(set(item) - BOARD_KEYS):
        add(key, f"unknown key (a board takes {', '.join(sorted(BOARD_KEYS))})")
    name = item.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        add("name", f"expected lower-case letters, digits and dashes (at most 40), found {kind(name)}")
    title = item.get("title", name)
    if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE or "\0" in title:
        add("title", f"expected a text of at most {MAX_TITLE} characters, found {kind(title)}")
    described = scorer.described() if scorer is not None else None
    known = {spec.name for spec in described.metrics} if described else set()
    metrics = item.get("metrics")
    if not isinstance(metrics, list) or not metrics or not all(isinstance(x, str) for x in metrics):
        add("metrics", f"expected a list of metric names, found {kind(metrics)}")
        metrics = []
    elif described is not None:
        for metric in metrics:
            if metric not in known:
                add(
                    "metrics",
                    f"{scorer.name if scorer else 'the scorer'} has no metric {metric!r} "
                    f"(it has: {', '.join(sorted(known))})",
                )
    ranking = item.get("ranking", "metric")
    if ranking not in RANKINGS:
        add("ranking", f"expected one of {', '.join(RANKINGS)}; found {kind(ranking)}")
    elif ranking != "metric" and len(metrics) < 2:
        add("ranking", f"{ranking} ranks by several metrics: name at least two")
    by = item.get("by")
    if by is not None and (ranking != "metric" or by not in metrics):
        add("by", "only a board ranked by one metric takes it, and it must be one of its metrics")
    cut = _slice(item.get("slice"), described.leaderboard_breakdowns if described else None, add)
    if problems:
        return None
    return BoardSpec(
        name=str(name), title=str(title), metrics=tuple(metrics), ranking=_ranking(ranking), by=by, slice=cut
    )


def _ranking(value: Any) -> Ranking:
    return next(r for r in RANKINGS if r == value)


def _slice(value: Any, dimensions: tuple[str, ...] | None, add: Any) -> tuple[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) != 1:
        add("slice", f"expected one breakdown and its part, like {{language: de}}; found {kind(value)}")
        return None
    ((dimension, key),) = value.items()
    if dimensions is not None and dimension not in dimensions:
        shown = ", ".join(dimensions) or "none"
        add("slice", f"the board can slice by what the scorer breaks its board down by ({shown}), not {dimension!r}")
        return None
    if not isinstance(key, str | int) or isinstance(key, bool):
        add("slice", f"expected the name of a part, found {kind(key)}")
        return None
    return (str(dimension), str(key))
