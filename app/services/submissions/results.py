"""What people may see of submissions and their scores.

Visibility: a submission is seen by its team's members and the competition's organizers. Its numbers
are shown only where the phase's metrics are public (a ``public`` phase, or a ``hidden`` one after
it was revealed) or to organizers; otherwise a scored submission shows its status without numbers.
The organizer message (the platform's error) is for organizers only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, undefer

from app.services.accounts.access import is_organizer, require_organizer, require_user
from app.services.accounts.teams import team_of
from app.services.code import runs as code_runs
from app.services.code.runs import RunView
from app.services.errors import NotFound
from app.services.jobs.queue_stats import QueuePlace, queue_places
from app.storage.models import (
    Competition,
    Phase,
    ProgramRun,
    Score,
    Submission,
    SubmissionStatus,
    Task,
    Team,
    TeamMember,
    User,
)
from app.storage.types import utcnow
from leaderboard.uncertainty import interval_view, stored_interval
from scorers import scorer_class


def current_scores(
    session: Session,
    submission_ids: Iterable[int],
    *,
    full: bool = False,
    breakdown: bool = False,
    units: bool = False,
) -> dict[int, Score]:
    """The newest round's score of each submission that has one. Its breakdown is loaded with
    ``breakdown`` or ``full``, its per-unit statistics (large) only with ``units`` or ``full``."""
    ids = list(submission_ids)
    if not ids:
        return {}
    newest = (
        select(Score.submission_id, func.max(Score.round).label("round"))
        .where(Score.submission_id.in_(ids))
        .group_by(Score.submission_id)
        .subquery()
    )
    query = select(Score).join(
        newest, (Score.submission_id == newest.c.submission_id) & (Score.round == newest.c.round)
    )
    if full or breakdown:
        query = query.options(undefer(Score.breakdown))
    if full or units:
        query = query.options(undefer(Score.units), undefer(Score.private_units))
    return {score.submission_id: score for score in session.scalars(query)}


def context_of(session: Session, submission: Submission) -> tuple[Phase, Task, Competition]:
    phase = session.get(Phase, submission.phase_id)
    assert phase is not None
    return phase, phase.task, phase.task.competition


def _may_see(session: Session, user: User | None, submission: Submission, competition: Competition) -> bool:
    if user is None:
        return False
    if is_organizer(session, user, competition.id):
        return True
    team = team_of(session, user, competition.id)
    return team is not None and submission.team_id == team.id


@dataclass(frozen=True)
class ScorerVersion:
    name: str
    version: str


@dataclass(frozen=True)
class OrganizerNotes:
    """What only the competition's organizers see of a submission: the platform's error and its attempts."""

    message: str
    attempts: int
    scoring_round: int
    worker: str | None
    quota_refunded: bool
    score_round: int | None
    #: How the scoring program last ran (phases scored by a program): shown by ``show``, the one submission.
    program_run: ProgramLogs | None = None


@dataclass(frozen=True)
class ProgramLogs:
    """How a scoring program ran on the submission's latest round: for organizers only."""

    round: int
    outcome: str
    exit_code: int | None
    signal: int | None
    timed_out: bool
    output_exceeded: bool
    wall_seconds: float
    #: The ends of the logs (``*_bytes``: their whole sizes).
    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int


def latest_program_run(session: Session, submission_id: int) -> ProgramRun | None:
    query = select(ProgramRun).where(ProgramRun.submission_id == submission_id).order_by(ProgramRun.round.desc())
    return session.scalar(query.limit(1))


def program_logs(run: ProgramRun) -> ProgramLogs:
    return ProgramLogs(
        run.round,
        run.outcome,
        run.exit_code,
        run.signal,
        run.timed_out,
        run.output_exceeded,
        run.wall_seconds,
        run.stdout,
        run.stderr,
        run.stdout_bytes,
        run.stderr_bytes,
    )


@dataclass(frozen=True)
class SubmissionRecord:
    """A submission as one viewer may see it (the API's ``SubmissionOut`` is shaped from it)."""

    id: int
    competition: str
    task: str
    phase: str
    team: str | None
    baseline: bool
    submitted_at: datetime
    original_name: str
    size: int
    sha256: str
    method_name: str
    method_description: str
    status: SubmissionStatus
    #: For the team: why the platform failed it, in plain words.
    message: str
    chosen: bool
    scored_at: datetime | None
    #: Scored, but the phase's numbers are not public yet.
    metrics_hidden: bool
    metrics: dict[str, float] | None
    scorer: ScorerVersion | None
    #: The primary metric's 95% interval stored with the score (``leaderboard.uncertainty.interval_view``),
    #: where the metrics are visible and the phase shows intervals; null for a score stored without one.
    interval: dict[str, Any] | None = None
    #: While queued: its place in the scoring queue (1: next) and when it will probably be scored.
    queue_position: int | None = None
    estimated_scored_at: datetime | None = None
    #: The breakdown tables, where asked for and visible.
    breakdown: dict[str, Any] | None = None
    organizer: OrganizerNotes | None = None
    #: On a code phase: how the program ran, as this viewer may see it (``services.code.runs.view``).
    code_run: RunView | None = None
    #: In a phase with a private split: the private board's metrics (``private_board`` says over which units:
    #: ``private`` or ``all``), shown to organizers at any time and to the team once the phase is revealed;
    #: ``metrics`` above are the public units'.
    private_metrics: dict[str, float] | None = None
    private_board: str | None = None


def _interval(score: Score, task: Task) -> dict[str, Any] | None:
    """The stored interval, if it is one of the primary metric as the task's options configure it."""
    primary = scorer_class(task.scorer).describe(task.scorer_options or {}).primary_metric
    stored = stored_interval(score.interval, primary)
    return None if stored is None else interval_view(stored)


def describe(
    submission: Submission,
    score: Score | None,
    *,
    phase: Phase,
    organizer: bool,
    team_name: str | None,
    detail: bool = False,
    place: QueuePlace | None = None,
) -> SubmissionRecord:
    """The submission as this viewer may see it (numbers only where they may be seen; the breakdown
    with ``detail``); ``place`` is its place in the queue while it is queued (``queue_stats.queue_places``)."""
    task = phase.task
    # A ladder board answers a team with its board score alone (``app.services.boards.ladder``).
    visible = organizer or (phase.metrics_public and phase.board != "ladder")
    notes = None
    if organizer:
        notes = OrganizerNotes(
            message=submission.organizer_message,
            attempts=submission.attempts,
            scoring_round=submission.scoring_round,
            worker=submission.worker,
            quota_refunded=submission.quota_refunded,
            score_round=score.round if score is not None else None,
        )
    return SubmissionRecord(
        id=submission.id,
        competition=task.competition.slug,
        task=task.slug,
        phase=phase.slug,
        team=team_name if not submission.is_baseline else submission.baseline_name,
        baseline=submission.is_baseline,
        submitted_at=submission.created_at,
        original_name=submission.original_name,
        size=submission.size,
        sha256=submission.sha256,
        method_name=submission.method_name,
        method_description=submission.method_description,
        status=submission.status,
        message=submission.participant_message,
        chosen=submission.chosen,
        scored_at=submission.finished_at if submission.status == SubmissionStatus.SCORED else None,
        metrics_hidden=score is not None and not visible,
        metrics=dict(score.metrics) if score is not None and visible else None,
        scorer=ScorerVersion(score.scorer, score.scorer_version) if score is not None else None,
        interval=_interval(score, task) if score is not None and visible and phase.intervals else None,
        queue_position=place.position if place is not None else None,
        estimated_scored_at=place.estimated_scored_at if place is not None else None,
        breakdown=score.breakdown if detail and score is not None and visible else None,
        organizer=notes,
        **_private(score, phase, visible=visible and (organizer or phase.revealed_at is not None)),
    )


def _private(score: Score | None, phase: Phase, *, visible: bool) -> dict[str, Any]:
    """The private board's numbers of a score, where the viewer may see them (after the reveal, or organizers)."""
    if score is None or not visible or score.private_metrics is None:
        return {}
    return {"private_metrics": dict(score.private_metrics), "private_board": phase.private_board}


def describe_upload(session: Session, submission: Submission) -> SubmissionRecord:
    """A just accepted upload as its uploader sees it: queued, with its place in the queue (never the
    organizers' notes, even when an organizer uploaded it)."""
    phase, _, _ = context_of(session, submission)
    team = session.get(Team, submission.team_id) if submission.team_id is not None else None
    place = queue_places(session, [submission], utcnow()).get(submission.id)
    return describe(submission, None, phase=phase, organizer=False, team_name=team.name if team else None, place=place)


def get_submission(session: Session, user: User | None, submission_id: int) -> Submission:
    """A submission its viewer may see (same answer for "missing" and "not yours", so ids leak nothing)."""
    user = require_user(user)
    submission = session.get(Submission, submission_id)
    if submission is None or not _may_see(session, user, submission, context_of(session, submission)[2]):
        raise NotFound(f"there is no submission {submission_id} that you may see")
    return submission


def show(session: Session, user: User | None, submission_id: int) -> SubmissionRecord:
    submission = get_submission(session, user, submission_id)
    phase, _, competition = context_of(session, submission)
    score = current_scores(session, [submission.id], breakdown=True).get(submission.id)
    team = session.get(Team, submission.team_id) if submission.team_id is not None else None
    organizer = is_organizer(session, user, competition.id)
    team_name = team.name if team else None
    place = queue_places(session, [submission], utcnow()).get(submission.id)
    record = describe(
        submission, score, phase=phase, organizer=organizer, team_name=team_name, detail=True, place=place
    )
    record = replace(record, code_run=code_runs.view(session, submission, organizer=organizer))
    run = latest_program_run(session, submission.id) if record.organizer is not None else None
    if record.organizer is None or run is None:
        return record
    return replace(record, organizer=replace(record.organizer, program_run=program_logs(run)))


def list_for_phase(
    session: Session, user: User | None, phase: Phase, *, everyone: bool = False
) -> list[SubmissionRecord]:
    """The caller's team's submissions to the phase, newest first; with ``everyone``, all of them
    (organizers only)."""
    user = require_user(user)
    competition = phase.task.competition
    organizer = is_organizer(session, user, competition.id)
    query = select(Submission, Team.name).outerjoin(Team, Team.id == Submission.team_id)
    query = query.where(Submission.phase_id == phase.id)
    if everyone:
        require_organizer(session, user, competition)
    else:
        team = team_of(session, user, competition.id)
        if team is None:
            return []
        query = query.where(Submission.team_id == team.id)
    rows = session.execute(query.order_by(Submission.created_at.desc(), Submission.id.desc())).all()
    scores = current_scores(session, (s.id for s, _ in rows))
    places = queue_places(session, [s for s, _ in rows], utcnow())
    return [
        describe(s, scores.get(s.id), phase=phase, organizer=organizer, team_name=name, place=places.get(s.id))
        for s, name in rows
    ]


#: The most submissions "My submissions" lists (the newest).
MINE_LIMIT = 500


def list_for_user(session: Session, user: User | None, *, limit: int = MINE_LIMIT) -> list[SubmissionRecord]:
    """The submissions of every team the caller is in, across competitions, newest first (at most ``limit``),
    as a member sees them: numbers only where the phase's are public."""
    user = require_user(user)
    query = (
        select(Submission, Team.name)
        .join(Team, Team.id == Submission.team_id)
        .join(TeamMember, TeamMember.team_id == Team.id)
        .where(TeamMember.user_id == user.id)
        .order_by(Submission.created_at.desc(), Submission.id.desc())
        .limit(limit)
    )
    rows = session.execute(query).all()
    phases = {p.id: p for p in session.scalars(select(Phase).where(Phase.id.in_({s.phase_id for s, _ in rows})))}
    scores = current_scores(session, (s.id for s, _ in rows))
    places = queue_places(session, [s for s, _ in rows], utcnow())
    return [
        describe(s, scores.get(s.id), phase=phases[s.phase_id], organizer=False, team_name=name, place=places.get(s.id))
        for s, name in rows
    ]
