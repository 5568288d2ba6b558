"""Ranking rules: from a phase's submissions and its rules to ranked leaderboard entries.

A leaderboard is never stored; it is recomputed from the stored scores each time, so changing a
rule or rescoring changes it at once.

Rules
-----
* Which submission counts for a team (``Rules.select``):
  ``best``    the scored submission with the best primary metric (then secondary metrics, then
              the earliest upload);
  ``latest``  the most recently uploaded scored submission;
  ``chosen``  the one the team marked as chosen; a team that chose none is represented by its
              latest scored submission. A chosen submission that is not (yet) scored leaves the
              team unranked rather than silently substituting another.
* Only candidates with a visible score (``metrics is not None`` and status ``scored``) are ranked;
  queued, running, failed and hidden entries never are.
* Order: the primary metric in its direction, then each secondary metric in its direction, then
  the earlier upload, then the submission id (so the order is total and deterministic).
* Ties: standard competition ranking ("1224"): entries whose primary and secondary metrics are all
  equal share a rank, and the next distinct entry's rank counts every entry above it.
* Baselines are ranked among the teams (each baseline system is its own entry) and marked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

Selection = Literal["best", "latest", "chosen"]
SELECTIONS: tuple[Selection, ...] = ("best", "latest", "chosen")


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
    #: Per-language (or other) columns from the stored breakdown, shown beside the metrics.
    columns: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    @property
    def rankable(self) -> bool:
        return self.status == "scored" and self.metrics is not None


@dataclass(frozen=True)
class Rules:
    """How a phase's leaderboard is built."""

    primary: str
    secondary: tuple[str, ...] = ()
    #: Direction per metric; a metric missing here counts as higher-is-better.
    higher_is_better: Mapping[str, bool] = field(default_factory=dict)
    select: Selection = "best"

    @property
    def ranking_metrics(self) -> tuple[str, ...]:
        return (self.primary, *(m for m in self.secondary if m != self.primary))


@dataclass(frozen=True)
class Entry:
    """A ranked row: the counting submission of one team, its rank and how many it scored."""

    rank: int
    candidate: Candidate
    scored_submissions: int


def _metric_key(candidate: Candidate, rules: Rules) -> tuple[float, ...]:
    """Sort key of the ranking metrics, oriented so that smaller sorts first (better)."""
    assert candidate.metrics is not None
    key = []
    for name in rules.ranking_metrics:
        value = float(candidate.metrics.get(name, float("nan")))
        if value != value:  # NaN or missing: after every real value
            key.append(float("inf"))
        else:
            key.append(-value if rules.higher_is_better.get(name, True) else value)
    return tuple(key)


def _order_key(candidate: Candidate, rules: Rules) -> tuple[tuple[float, ...], datetime, int]:
    return (_metric_key(candidate, rules), candidate.submitted_at, candidate.submission_id)


def select_per_team(candidates: Iterable[Candidate], rules: Rules) -> dict[int | str, tuple[Candidate | None, int]]:
    """For each team: the submission that counts (or ``None``) and how many of its are rankable."""
    by_team: dict[int | str, list[Candidate]] = {}
    for c in candidates:
        by_team.setdefault(c.team_id, []).append(c)
    out: dict[int | str, tuple[Candidate | None, int]] = {}
    for team_id, team_candidates in by_team.items():
        scored = [c for c in team_candidates if c.rankable]
        chosen = [c for c in team_candidates if c.chosen]
        pick: Candidate | None
        if rules.select == "chosen" and chosen:
            latest_choice = max(chosen, key=lambda c: (c.submitted_at, c.submission_id))
            pick = latest_choice if latest_choice.rankable else None
        elif not scored:
            pick = None
        elif rules.select == "best":
            pick = min(scored, key=lambda c: _order_key(c, rules))
        else:  # latest, or chosen without a choice
            pick = max(scored, key=lambda c: (c.submitted_at, c.submission_id))
        out[team_id] = (pick, len(scored))
    return out


def rank(candidates: Iterable[Candidate], rules: Rules) -> list[Entry]:
    """The leaderboard: one entry per team with a rankable counting submission, best first."""
    picked = [(c, n) for c, n in select_per_team(candidates, rules).values() if c is not None]
    picked.sort(key=lambda item: _order_key(item[0], rules))
    entries: list[Entry] = []
    previous: tuple[float, ...] | None = None
    current_rank = 0
    for position, (candidate, count) in enumerate(picked, start=1):
        key = _metric_key(candidate, rules)
        if key != previous:
            current_rank = position
            previous = key
        entries.append(Entry(current_rank, candidate, count))
    return entries
