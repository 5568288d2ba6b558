"""The fair order of a kind's waiting jobs: competitions take turns, then teams, then first come first served.

Every job row belongs to a competition (through its phase's task) and, for a team's upload, to a team. The
rows a kind holds now (running with a live lease) and those that wait (queued, or running with an expired
lease) are dealt turns, a round robin:

1. within a competition, each team's rows are numbered in the order they came (its running rows first: they
   had their turn), the ``team turn``;
2. a competition's rows are numbered by team turn; among the teams at one turn, the team served least
   recently goes first (a team with nothing started since the oldest waiting job came: first of all), then
   the one that came first. That number is the row's ``turn`` in its competition;
3. the waiting rows of every competition go in order of turn; at one turn, the competition served least
   recently first (by the same rule), then the row that came first.

"Served" is when a row of the kind last started. So a competition with work waiting is served in every
round, whatever another one queued: a lone job of a quiet competition is the next one a free worker takes
(it waits only for jobs of competitions served even longer ago, at most one of each), and two competitions
that both flood one worker take every second job each; the same holds for the teams of one competition. A
competition whose jobs already run on several workers waits behind the others' first ones. The order holds
no state beyond the rows themselves (no counters to keep exact), so the place a participant is shown
(``positions``) and the job a worker claims next (``fairest``) come from one query and agree.

Written here rather than taken from a task queue library: the order must be computed by the database over
the job rows themselves (they are the one record of what waits), in both modes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, Select, and_, case, func, null, or_, select
from sqlalchemy.orm import Session

from app.services.jobs.lease import QUEUED, RUNNING, JobRow
from app.storage.models import BaselineRun, CodeRun, Phase, Submission, Task

#: How many rows at the head of the order a claim tries before it looks again.
HEAD = 8


def waiting(model: JobRow, now: datetime) -> ColumnElement[bool]:
    """Rows that wait for a worker: queued, or running with a lease that expired (their worker died)."""
    return or_(model.status == QUEUED, and_(model.status == RUNNING, model.lease_expires_at < now))


def _held(model: JobRow, now: datetime) -> ColumnElement[bool]:
    return and_(model.status == RUNNING, model.lease_expires_at >= now)


def _owners(model: JobRow) -> Select[int, int, int | None]:
    """The kind's rows with their competition and team (none for an organizer's run)."""
    if model is Submission:
        return (
            select(
                Submission.id.label("id"), Task.competition_id.label("competition"), Submission.team_id.label("team")
            )
            .join(Phase, Phase.id == Submission.phase_id)
            .join(Task, Task.id == Phase.task_id)
        )
    if model is CodeRun:
        return (
            select(CodeRun.id.label("id"), Task.competition_id.label("competition"), Submission.team_id.label("team"))
            .join(Submission, Submission.id == CodeRun.submission_id)
            .join(Phase, Phase.id == Submission.phase_id)
            .join(Task, Task.id == Phase.task_id)
        )
    if model is BaselineRun:
        return (
            select(BaselineRun.id.label("id"), Task.competition_id.label("competition"), null().label("team"))
            .join(Phase, Phase.id == BaselineRun.phase_id)
            .join(Task, Task.id == Phase.task_id)
        )
    raise TypeError(f"no fair order for {model!r}")


def _ranked(
    model: JobRow, now: datetime, eligible: ColumnElement[bool] | None, among: ColumnElement[bool] | None = None
) -> Select[int, bool, int]:
    """The waiting rows with their place in the fair order (``place``, 1 first) and whether ``eligible``
    holds for them; only the rows of one queue where ``among`` says which (a competition's own queue, or the
    platform's: ``routing``), so that the order and the places are those of the workers that take them."""
    held, waits = _held(model, now), waiting(model, now)
    rows = (
        _owners(model)
        .add_columns(
            model.created_at.label("created_at"),
            case((held, 0), else_=1).label("waits"),
            (eligible if eligible is not None else waits).label("eligible"),
        )
        .where(or_(held, waits), *(() if among is None else (among,)))
        .subquery()
    )
    # When each team (and competition) was last served, counting only starts since the oldest waiting row
    # came: a start before that is as good as none, and so the rows read stay few.
    oldest = select(func.min(model.created_at)).where(waits).scalar_subquery()
    started = _owners(model).add_columns(model.started_at.label("started_at")).where(model.started_at >= oldest)
    recent = started.subquery()
    team_last = (
        select(recent.c.competition, recent.c.team, func.max(recent.c.started_at).label("last"))
        .group_by(recent.c.competition, recent.c.team)
        .subquery()
    )
    competition_last = (
        select(team_last.c.competition, func.max(team_last.c.last).label("last"))
        .group_by(team_last.c.competition)
        .subquery()
    )
    joined = (
        select(rows, team_last.c.last.label("team_last"), competition_last.c.last.label("competition_last"))
        .outerjoin(
            team_last,
            and_(team_last.c.competition == rows.c.competition, team_last.c.team.is_not_distinct_from(rows.c.team)),
        )
        .outerjoin(competition_last, competition_last.c.competition == rows.c.competition)
        .subquery()
    )
    team_turn = func.row_number().over(
        partition_by=(joined.c.competition, joined.c.team), order_by=(joined.c.waits, joined.c.created_at, joined.c.id)
    )
    teams = select(joined, team_turn.label("team_turn")).subquery()
    turn = func.row_number().over(
        partition_by=teams.c.competition,
        order_by=(
            teams.c.team_turn,
            teams.c.waits,
            teams.c.team_last.nulls_first(),
            teams.c.created_at,
            teams.c.id,
        ),
    )
    turns = (
        select(teams.c.id, teams.c.created_at, teams.c.waits, teams.c.eligible, teams.c.competition_last)
        .add_columns(turn.label("turn"))
        .subquery()
    )
    waiting_turns = select(turns).where(turns.c.waits == 1).subquery()
    place = func.row_number().over(
        order_by=(
            waiting_turns.c.turn,
            waiting_turns.c.competition_last.nulls_first(),
            waiting_turns.c.created_at,
            waiting_turns.c.id,
        )
    )
    return select(waiting_turns.c.id, waiting_turns.c.eligible, place.label("place"))


def fairest(
    session: Session,
    model: JobRow,
    now: datetime,
    eligible: ColumnElement[bool],
    *,
    limit: int = HEAD,
    among: ColumnElement[bool] | None = None,
) -> list[int]:
    """The ids of the first ``limit`` waiting rows in the fair order (of the rows ``among``) that are
    ``eligible``."""
    ranked = _ranked(model, now, eligible, among).subquery()
    query = select(ranked.c.id).where(ranked.c.eligible.is_(True)).order_by(ranked.c.place).limit(limit)
    return list(session.scalars(query))


def positions(
    session: Session,
    model: JobRow,
    row_ids: Iterable[int],
    now: datetime,
    *,
    among: ColumnElement[bool] | None = None,
) -> dict[int, int]:
    """The place (1: next) of each of ``row_ids`` that waits, in the order workers take them (those of the rows
    ``among``)."""
    wanted: Sequence[int] = list(row_ids)
    if not wanted:
        return {}
    ranked = _ranked(model, now, None, among).subquery()
    query = select(ranked.c.id, ranked.c.place).where(ranked.c.id.in_(wanted))
    return {row_id: int(place) for row_id, place in session.execute(query).all()}
