"""A phase's submissions as the ranking sees them: each with its newest score, read from the database.

Nothing about a ranking is stored: ``app.services.boards.snapshot`` ranks these candidates by the
task scorer's metrics and the phase's selection rule. A submission being rescored keeps its
previous score until the new one lands; a failed one is never ranked.

Scores are immutable, so what a board reads of one (its metrics, and the breakdown columns it shows) is read
and decoded once and kept (``Kept``, held by the board cache, keyed by the score's id and creation time): a
board built again after a score landed reads the phase's submissions and their newest scores' ids, and the
numbers of the new score only.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from sqlalchemy import exists, func, select
from sqlalchemy.orm import Session, aliased

from app.services.boards.kept import Kept
from app.storage.models import Phase, Score, Submission, SubmissionStatus, Team
from leaderboard.ranking import BreakdownColumns, Candidate

#: Scores whose numbers one query reads (a bound on the statement's parameters).
BATCH = 500


def _baseline_system(name: str | None, version: str | None) -> str:
    """A baseline's entry is its system and version ("svident-tfidf-lr 1"): each version ranks on its own."""
    return " ".join(part for part in (name, version) if part)


#: A score as what is kept of it is keyed: its id and creation time (a row id used again after a deletion is
#: another score).
ScoreName = tuple[int, Any]


def candidates(
    session: Session,
    phase: Phase,
    *,
    with_columns: tuple[str, ...] = (),
    kept: Kept | None = None,
    names: dict[int, ScoreName] | None = None,
) -> list[Candidate]:
    """Every submission of the phase as the ranking sees it (with numbers; visibility is the caller's). ``kept``
    holds the numbers of scores read before (see the module docstring); ``names``, when given, receives each
    scored submission's newest score (``score_names``), read with them."""
    # The newest round's score: one with no later round (an index probe per score, whatever the planner's
    # statistics say; a join on a grouped subquery went quadratic on PostgreSQL before its tables were analyzed).
    later = aliased(Score)
    newest = ~exists().where(later.submission_id == Score.submission_id, later.round > Score.round)
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
            Score.id.label("score_id"),
            Score.created_at.label("scored_at"),
        )
        .outerjoin(Team, Team.id == Submission.team_id)
        .outerjoin(Score, (Score.submission_id == Submission.id) & newest)
        .where(Submission.phase_id == phase.id)
    )
    rows = session.execute(query).all()
    named = {row.id: (row.score_id, row.scored_at) for row in rows if row.score_id is not None}
    if names is not None:
        names.update(named)
    numbers = _numbers(session, list(named.values()), with_columns, kept)
    out = []
    for row in rows:
        metrics, columns = numbers.get(row.score_id, (None, {}))
        ranked_status = (
            SubmissionStatus.SCORED if metrics is not None and row.status != SubmissionStatus.FAILED else row.status
        )
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
                columns=columns if metrics is not None else {},
            )
        )
    return out


Numbers = tuple[Mapping[str, float] | None, BreakdownColumns]


def _numbers(
    session: Session, scores: list[tuple[int, Any]], with_columns: tuple[str, ...], kept: Kept | None
) -> dict[int, Numbers]:
    """The metrics and shown breakdown columns of each score (id, created_at), from ``kept`` or read and kept."""
    memory = kept if kept is not None else Kept(0)

    def key(score_id: int, created_at: Any) -> Hashable:
        return ("numbers", score_id, created_at, with_columns)

    out: dict[int, Numbers] = {}
    missing: dict[int, Hashable] = {}
    for score_id, created_at in scores:
        found, value = memory.get(key(score_id, created_at))
        if found:
            out[score_id] = value
        else:
            missing[score_id] = key(score_id, created_at)
    columns: list[Any] = [Score.id, Score.metrics]
    if with_columns:
        columns.append(Score.breakdown)
    todo = list(missing)
    for first in range(0, len(todo), BATCH):
        for row in session.execute(select(*columns).where(Score.id.in_(todo[first : first + BATCH]))):
            shown: BreakdownColumns = {}
            if with_columns and row.metrics is not None:
                breakdown = row.breakdown or {}
                shown = {dim: breakdown[dim] for dim in with_columns if dim in breakdown}
            value = (row.metrics, shown)
            out[row.id] = value
            memory.put(missing[row.id], value)
    memory.count("scores read", len(todo))
    return out


def score_names(session: Session, ids: Sequence[int]) -> dict[int, ScoreName]:
    """Each submission's newest score, named by its id and creation time (so that a row id used again after a
    deletion is another score)."""
    out: dict[int, ScoreName] = {}
    for first in range(0, len(ids), BATCH):
        batch = list(ids[first : first + BATCH])
        newest = (
            select(Score.submission_id, func.max(Score.round).label("round"))
            .where(Score.submission_id.in_(batch))
            .group_by(Score.submission_id)
            .subquery()
        )
        query = select(Score.submission_id, Score.id, Score.created_at).join(
            newest, (Score.submission_id == newest.c.submission_id) & (Score.round == newest.c.round)
        )
        out.update({row.submission_id: (row.id, row.created_at) for row in session.execute(query)})
    return out
