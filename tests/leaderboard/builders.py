"""Small builders shared by the leaderboard tests: candidates, and a tiny real scorer to describe."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

from leaderboard.ranking import BreakdownColumns, Candidate
from scorers.base import MetricSpec, Scorer, UnitStats
from scorers.description import ScorerDescription

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def make_candidate(
    submission_id: int,
    team: str,
    hours: float = 0,
    metrics: Mapping[str, float] | None = None,
    *,
    status: str = "scored",
    baseline: bool = False,
    chosen: bool = False,
    system: str = "",
    columns: BreakdownColumns | None = None,
) -> Candidate:
    """A submission of ``team`` uploaded ``hours`` after ``T0``; the team id is the team name."""
    return Candidate(
        submission_id=submission_id,
        team_id=team,
        team=team,
        system=system or f"{team}-system",
        submitted_at=T0 + timedelta(hours=hours),
        status=status,
        metrics=metrics,
        baseline=baseline,
        chosen=chosen,
        columns=columns or {},
    )


class MeanScorer(Scorer[dict[str, float], None, dict[str, float]]):
    """Scores each document by one number ``x``; ``mean`` averages them, ``error`` is ``1 - mean``."""

    name = "mean-test"
    version = "1"
    title = "Mean of document values"
    primary_metric = "mean"
    secondary_metrics = ("error",)
    metrics = (
        MetricSpec("mean", "mean of the document values"),
        MetricSpec("error", "one minus the mean", higher_is_better=False),
    )
    gold_format = "{doc: 1}"
    submission_format = "{doc: x}"
    leaderboard_breakdowns = ("language",)

    def parse_gold(self, data: bytes) -> dict[str, float]:
        raise NotImplementedError

    def public_view(self, gold: dict[str, float]) -> None:
        raise NotImplementedError

    def parse_submission(self, data: bytes, public: None) -> dict[str, float]:
        raise NotImplementedError

    def unit_stats(self, gold: dict[str, float], submission: dict[str, float]) -> dict[str, UnitStats]:
        return {doc: {"x": submission[doc]} for doc in gold}

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        mean = sum(float(s["x"]) for s in stats) / len(stats)
        return {"mean": mean, "error": 1 - mean}


def describe() -> ScorerDescription:
    return MeanScorer.describe()
