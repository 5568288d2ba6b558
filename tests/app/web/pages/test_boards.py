"""The leaderboard table of the page: column order, per-language columns, percentages and arrows."""

from __future__ import annotations

from datetime import UTC, datetime

from app.services.boards.snapshot import BoardSnapshot, PhaseFacts
from app.web.pages.boards import board_view
from leaderboard.ranking import Candidate, Rules, rank
from scorers import MetricSpec, ScorerDescription

DESCRIPTION = ScorerDescription(
    name="toy",
    version="1",
    title="Toy",
    summary="",
    primary_metric="f1",
    secondary_metrics=("recall",),
    metrics=(
        MetricSpec("precision", "p"),
        MetricSpec("recall", "r"),
        MetricSpec("f1", "harmonic mean"),
        MetricSpec("errors", "mistakes", higher_is_better=False),
    ),
    options=(),
    gold_format="",
    submission_format="",
    submission_filename="submission.json",
    unit="document",
    leaderboard_breakdowns=("language",),
)


def candidate(sid: int, team: str, f1: float, *, baseline: bool = False) -> Candidate:
    return Candidate(
        submission_id=sid,
        team_id=sid,
        team=team,
        system=f"system {sid}",
        submitted_at=datetime(2024, 5, sid, tzinfo=UTC),
        status="scored",
        metrics={"precision": 0.5, "recall": 0.25, "f1": f1, "errors": 0.125},
        baseline=baseline,
        columns={"language": {"en": {"f1": f1 - 0.1}, "de": {"f1": f1 + 0.1}}},
    )


def snapshot(*candidates: Candidate) -> BoardSnapshot:
    facts = PhaseFacts(1, 1, "c", "C", "t", "T", "p", "P", "", "best", "public", None, None, None)
    rules = Rules.from_description(DESCRIPTION)
    return BoardSnapshot(
        facts, "public", False, DESCRIPTION, rules, tuple(rank(candidates, rules)), candidates, 0, (), 0.0, 0.0
    )


def test_primary_first_then_secondary_other_metrics_and_languages() -> None:
    view = board_view(snapshot(candidate(1, "ada", 0.6125), candidate(2, "Baseline", 0.4, baseline=True)))
    assert [h.label for h in view.headers] == ["f1 ↑", "recall ↑", "precision ↑", "errors ↓", "de f1 ↑", "en f1 ↑"]
    assert [h.primary for h in view.headers] == [True, False, False, False, False, False]
    assert view.headers[0].title == "harmonic mean; higher is better"
    # f1 0.6125 -> 61.25 %; de = f1 + 0.1 = 71.25 %, en = f1 - 0.1 = 51.25 %
    assert view.rows[0].cells == ("61.25", "25.00", "50.00", "12.50", "71.25", "51.25")
    assert [(r.rank, r.team, r.baseline) for r in view.rows] == [(1, "ada", False), (2, "Baseline", True)]
