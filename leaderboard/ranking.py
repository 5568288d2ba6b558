"""Ranking rules: from a phase's submissions and its rules to ranked leaderboard entries.

A leaderboard is never stored; it is recomputed from the stored scores each time, so changing a
rule or rescoring changes it at once.

Rules
-----
* Who gets an entry: each team, and each baseline system on its own (baselines are grouped by
  ``(team_id, system)``, so one organizer team can host several baselines); baselines are ranked
  among the teams and marked.
* Which submission counts for an entrant (``Rules.select``):
  ``best``    the scored submission with the best primary metric (then secondary metrics, then
              the earliest upload);
  ``latest``  the most recently uploaded scored submission;
  ``chosen``  the one the team marked as chosen (its latest choice if it marked several); a team
              that chose none is represented by its latest scored submission. A chosen submission
              that has no visible score (queued, running, failed, hidden) leaves the team unranked
              rather than silently substituting another.
* Only candidates with a visible score (status ``scored`` and ``metrics is not None``) are ranked;
  queued, running, failed and hidden entries never are.
* Order: the primary metric in its direction, then each secondary metric in its direction, then
  the earlier upload, then the submission id (so the order is total and deterministic). A metric
  that is missing, NaN or not a number sorts after every real value, whatever the direction.
* Ties: standard competition ranking ("1224"): entrants whose primary and secondary metrics are
  all equal share a rank, and the next distinct entrant's rank counts every entrant above it
  (two share first place, the next is third). Upload time orders tied entrants on the page but
  never splits their rank.
* Times: naive datetimes (as SQLite returns them) are taken to be UTC.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, get_args

if TYPE_CHECKING:
    from scorers.description import ScorerDescription

Selection = Literal["best", "latest", "chosen"]
SELECTIONS: tuple[Selection, ...] = get_args(Selection)
#: Who gets one leaderboard entry: ``(team_id, "")`` for a team, ``(team_id, system)`` for a baseline.
EntrantKey = tuple[int | str, str]
#: ``{dimension: {key: {metric: value}}}``, the shape of a stored score breakdown.
BreakdownColumns = Mapping[str, Mapping[str, Mapping[str, float]]]


def utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive datetime is taken to be UTC already (as stored)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def metric_value(metrics: Mapping[str, Any] | None, name: str) -> float | None:
    """The metric as a float, or ``None`` when it is absent, NaN or not a number (``True`` is not one)."""
    if metrics is None:
        return None
    value = metrics.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return None if math.isnan(number) else number


@dataclass(frozen=True)
class Candidate:
    """One submission as the leaderboard sees it.

    ``metrics`` is ``None`` when the submission has no score the viewer may see (not scored yet,
    failed, or in a hidden phase).
    """

    submission_id: int
    team_id: int | str
    team: str
    system: str
    submitted_at: datetime
    status: str
    metrics: Mapping[str, float] | None
    baseline: bool = False
    chosen: bool = False
    #: The stored breakdown restricted to the scorer's ``leaderboard_breakdowns``
    #: (``{"language": {"de": {"f1": 0.61}}}``), shown beside the metrics.
    columns: BreakdownColumns = field(default_factory=dict)

    @property
    def rankable(self) -> bool:
        return self.status == "scored" and self.metrics is not None

    @property
    def entrant(self) -> EntrantKey:
        return (self.team_id, self.system if self.baseline else "")


@dataclass(frozen=True)
class Rules:
    """How a phase's leaderboard is built."""

    primary: str
    secondary: tuple[str, ...] = ()
    #: Direction per metric; a metric missing here counts as higher-is-better.
    higher_is_better: Mapping[str, bool] = field(default_factory=dict)
    select: Selection = "best"

    def __post_init__(self) -> None:
        # Rules come from stored phase settings, so a bad value must be named, not ranked wrongly.
        if not isinstance(self.primary, str) or not self.primary:
            raise ValueError(f"the primary metric must be a non-empty string, not {self.primary!r}")
        if self.select not in SELECTIONS:
            raise ValueError(f"unknown selection rule {self.select!r}; expected one of {', '.join(SELECTIONS)}")

    @classmethod
    def from_description(cls, description: ScorerDescription, select: Selection = "best") -> Rules:
        """Rules from a scorer's description: its primary and secondary metrics and their directions."""
        return cls(
            primary=description.primary_metric,
            secondary=description.secondary_metrics,
            higher_is_better={m.name: m.higher_is_better for m in description.metrics},
            select=select,
        )

    @property
    def ranking_metrics(self) -> tuple[str, ...]:
        return (self.primary, *(m for m in self.secondary if m != self.primary))


@dataclass(frozen=True)
class Entry:
    """A ranked row: the counting submission of one entrant, its rank and how many it scored."""

    rank: int
    candidate: Candidate
    scored_submissions: int


_MetricKey = tuple[tuple[int, float], ...]


def _metric_key(candidate: Candidate, rules: Rules) -> _MetricKey:
    """Sort key of the ranking metrics, oriented so that smaller sorts first (better).

    Each metric becomes ``(0, oriented value)``, or ``(1, 0.0)`` when it has no value, so that a
    missing value sorts last in either direction and two missing values compare equal.
    """
    key = []
    for name in rules.ranking_metrics:
        value = metric_value(candidate.metrics, name)
        if value is None:
            key.append((1, 0.0))
        else:
            key.append((0, -value if rules.higher_is_better.get(name, True) else value))
    return tuple(key)


def _order_key(candidate: Candidate, rules: Rules) -> tuple[_MetricKey, datetime, int]:
    return (_metric_key(candidate, rules), utc(candidate.submitted_at), candidate.submission_id)


def _recency(candidate: Candidate) -> tuple[datetime, int]:
    return (utc(candidate.submitted_at), candidate.submission_id)


def select_per_team(candidates: Iterable[Candidate], rules: Rules) -> dict[EntrantKey, tuple[Candidate | None, int]]:
    """For each entrant: the submission that counts (or ``None``) and how many of its are rankable."""
    by_entrant: dict[EntrantKey, list[Candidate]] = {}
    for c in candidates:
        by_entrant.setdefault(c.entrant, []).append(c)
    out: dict[EntrantKey, tuple[Candidate | None, int]] = {}
    for entrant, entrant_candidates in by_entrant.items():
        scored = [c for c in entrant_candidates if c.rankable]
        chosen = [c for c in entrant_candidates if c.chosen]
        pick: Candidate | None
        if rules.select == "chosen" and chosen:
            latest_choice = max(chosen, key=_recency)
            pick = latest_choice if latest_choice.rankable else None
        elif not scored:
            pick = None
        elif rules.select == "best":
            pick = min(scored, key=lambda c: _order_key(c, rules))
        else:  # latest, or chosen without a choice
            pick = max(scored, key=_recency)
        out[entrant] = (pick, len(scored))
    return out


def rank(candidates: Iterable[Candidate], rules: Rules) -> list[Entry]:
    """The leaderboard: one entry per entrant with a rankable counting submission, best first."""
    picked = [(c, n) for c, n in select_per_team(candidates, rules).values() if c is not None]
    picked.sort(key=lambda item: _order_key(item[0], rules))
    entries: list[Entry] = []
    previous: _MetricKey | None = None
    current_rank = 0
    for position, (candidate, count) in enumerate(picked, start=1):
        key = _metric_key(candidate, rules)
        if key != previous:
            current_rank = position
            previous = key
        entries.append(Entry(current_rank, candidate, count))
    return entries
