"""A phase's submissions as the ranking sees them: each with its newest score, read from the database.

Nothing about a ranking is stored: ``app.services.boards.snapshot`` ranks these candidates by the
task scorer's metrics and the phase's selection rule. A submission being rescored keeps its
previous score until the new one lands; a failed one is never ranked.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.storage.models import Phase, Score, Submission, SubmissionStatus, Team
from leaderboard.ranking import Candidate


def _baseline_system(name: str | None, version: str | None) -> str:
    """A baseline's entry is its system and version ("svident-tfidf-lr 1"): each version ranks on its own."""
    return " ".join(part for part in (name, version) if part)


def candidates(session: Session, phase: Phase, *, with_columns: tuple[str, ...] = ()) -> list[Candidate]:
    """Every submission of the phase as the ranking sees it (with numbers; visibility is the caller's)."""
    newest = (
        select(Score.submission_id, func.max(Score.round).label("round"))
        .join(Submission, Submission.id == Score.submission_id)
        .where(Submission.phase_id == phase.id)
        .group_by(Score.submission_id)
        .subquery()
    )
    score_columns: list[Any] = [Score.metrics]
    if with_columns:
        score_columns.append(Score.breakdown)
    query = (
        select(
            Submission.id,
            Submission.team_id,
            Submission.method_name,
            Submission.created_at,
            Submission.status,
            Submission.is_baseline,
            Submission.baseline_name,
            Submission.baseline_version,
            Submission.chosen,
            Team.name,
            *score_columns,
        )
        .outerjoin(Team, Team.id == Submission.team_id)
        .outerjoin(newest, newest.c.submission_id == Submission.id)
        .outerjoin(Score, (Score.submission_id == Submission.id) & (Score.round == newest.c.round))
        .where(Submission.phase_id == phase.id)
    )
    out = []
    for row in session.execute(query):
        metrics = row.metrics
        ranked_status = (
            SubmissionStatus.SCORED if metrics is not None and row.status != SubmissionStatus.FAILED else row.status
        )
        columns = {}
        if with_columns and metrics is not None:
            breakdown = row.breakdown or {}
            columns = {dim: breakdown[dim] for dim in with_columns if dim in breakdown}
        baseline = bool(row.is_baseline)
        out.append(
            Candidate(
                submission_id=row.id,
                team_id=row.team_id if row.team_id is not None else "baseline",
                team=(row.baseline_name or "baseline") if baseline else (row.name or ""),
                system=_baseline_system(row.baseline_name, row.baseline_version) if baseline else row.method_name,
                submitted_at=row.created_at,
                status=ranked_status,
                metrics=metrics,
                baseline=baseline,
                chosen=bool(row.chosen),
                columns=columns,
            )
        )
    return out
