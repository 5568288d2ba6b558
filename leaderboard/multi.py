"""Several boards of one phase: each shows some metrics, on all units or on a slice of them, ranked its own way.

A phase's main board ranks each team by its counting submission (``leaderboard.ranking``); a further board
(``BoardSpec``, the bundle's ``boards``) takes the same entries and ranks them again:

* its values are the metrics it names, overall or on a slice the scorer breaks its score down by
  (``slice: {language: de}``: the entry's stored breakdown ``columns["language"]["de"]``);
* ``ranking: metric`` ranks by one metric (``by``, default the first), in its direction;
* ``ranking: mean_of_ranks`` ranks by the mean, over the metrics, of each entry's *fractional* rank on each (ties
  share the mean of the places they hold: two entries tied for first both rank 1.5), lower is better;
* ``ranking: rank_of_ranks`` ranks by the mean of each entry's *competition* rank on each metric (ties share the
  best place they hold: 1, 1, 3), lower is better. The two differ where a metric has ties.

An entry without a value of a metric ranks after every entry with one (on that metric: last place). Ranks on the
board are competition ranks of its score ("1224"); entries with equal scores share a rank. Ranks per metric come
from ``scipy.stats.rankdata``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from leaderboard.ranking import Entry, metric_value

Ranking = Literal["metric", "mean_of_ranks", "rank_of_ranks"]
RANKINGS: tuple[Ranking, ...] = get_args(Ranking)


@dataclass(frozen=True)
class BoardSpec:
    """One further board of a phase (see the module docstring)."""

    name: str
    title: str
    metrics: tuple[str, ...]
    ranking: Ranking = "metric"
    #: For ``ranking: metric``: the metric it ranks by (None: the first of ``metrics``).
    by: str | None = None
    #: ``(dimension, key)`` of the breakdown the values come from (None: the overall metrics).
    slice: tuple[str, str] | None = None

    @property
    def ranked_by(self) -> str:
        return self.by or self.metrics[0]

    def to_dict(self) -> dict[str, object]:
        """Plain JSON data, as a phase stores it; ``from_dict`` reads it back."""
        return {
            "name": self.name,
            "title": self.title,
            "metrics": list(self.metrics),
            "ranking": self.ranking,
            "by": self.by,
            "slice": list(self.slice) if self.slice else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> BoardSpec:
        cut = data.get("slice")
        ranking = str(data.get("ranking", "metric"))
        if ranking not in RANKINGS:
            raise ValueError(f"unknown ranking {ranking!r}")
        return cls(
            name=str(data["name"]),
            title=str(data.get("title") or data["name"]),
            metrics=tuple(str(m) for m in data["metrics"]),  # type: ignore[attr-defined]
            ranking=ranking,
            by=None if data.get("by") is None else str(data["by"]),
            slice=(str(cut[0]), str(cut[1])) if isinstance(cut, list | tuple) and len(cut) == 2 else None,
        )


@dataclass(frozen=True)
class BoardRow:
    """An entry on a further board: its rank there, the main board's entry, its values and ranks per metric, and
    the score it is ranked by (a metric's value, or a mean of ranks)."""

    rank: int
    entry: Entry
    values: Mapping[str, float | None]
    score: float | None
    ranks: Mapping[str, float] = field(default_factory=dict)


def values_of(entry: Entry, spec: BoardSpec) -> dict[str, float | None]:
    """The entry's value of each of the board's metrics, overall or on its slice."""
    if spec.slice is None:
        return {m: metric_value(entry.candidate.metrics, m) for m in spec.metrics}
    dimension, key = spec.slice
    group = entry.candidate.columns.get(dimension, {}).get(key)
    return {m: metric_value(group, m) for m in spec.metrics}


def metric_ranks(values: Sequence[float | None], higher_is_better: bool, method: str) -> list[float]:
    """Each value's rank (1 the best) by ``scipy.stats.rankdata`` with ``method`` (``average``: fractional,
    ``min``: competition); a missing value takes the last place."""
    import numpy as np
    from scipy.stats import rankdata  # imported where used: scipy.stats is slow to import

    worst = math.inf
    keyed = [worst if v is None else (-v if higher_is_better else v) for v in values]
    present = [k for k in keyed if k != worst]
    ranks = rankdata(np.asarray(present, dtype=np.float64), method=method) if present else np.zeros(0)
    out, taken = [], iter(ranks.tolist())
    for k in keyed:
        out.append(float(len(values)) if k == worst else float(next(taken)))
    return out


def rank_board(spec: BoardSpec, entries: Sequence[Entry], higher_is_better: Mapping[str, bool]) -> list[BoardRow]:
    """The board's rows, best first (see the module docstring)."""
    values = [values_of(entry, spec) for entry in entries]
    ranks: list[dict[str, float]] = [{} for _ in entries]
    if spec.ranking == "metric":
        metric = spec.ranked_by
        better = higher_is_better.get(metric, True)
        scores = [v[metric] for v in values]
        order_keys = [(1, 0.0) if s is None else (0, -s if better else s) for s in scores]
    else:
        import numpy as np

        method = "average" if spec.ranking == "mean_of_ranks" else "min"
        for metric in spec.metrics:
            column = metric_ranks([v[metric] for v in values], higher_is_better.get(metric, True), method)
            for i, r in enumerate(column):
                ranks[i][metric] = r
        scores = [float(np.mean([r[m] for m in spec.metrics])) for r in ranks]
        order_keys = [(0, s) for s in scores]  # type: ignore[misc]
    order = sorted(range(len(entries)), key=lambda i: (order_keys[i], entries[i].rank, i))
    rows: list[BoardRow] = []
    for position, i in enumerate(order, start=1):
        shared = rows and order_keys[order[position - 2]] == order_keys[i]
        rank = rows[-1].rank if shared else position
        rows.append(BoardRow(rank, entries[i], values[i], scores[i], ranks[i]))
    return rows
