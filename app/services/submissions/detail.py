"""What a submission's detail page may show to whom.

The team that submitted and the competition's organizers see the submission as ``results.show``
gives it (numbers only where the phase's metrics are visible to them). Anyone else may see a
submission only while it is an entry of the public leaderboard (the link from each row), and then
only what the leaderboard already makes public plus its breakdowns: never the file, its name or
the messages. Everything else answers "not found", so ids reveal nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy.orm import Session

from app.services.accounts.access import is_organizer
from app.services.accounts.teams import team_of
from app.services.boards.cache import BoardCache
from app.services.boards.snapshot import PhaseRef
from app.services.competitions.catalog import task_description
from app.services.errors import NotFound
from app.services.submissions import results
from app.services.submissions.results import SubmissionRecord
from app.storage.models import Phase, Submission, Team, User
from scorers import ScorerDescription


@dataclass(frozen=True)
class SubmissionView:
    """A submission as one viewer may see it."""

    record: SubmissionRecord
    ref: PhaseRef
    #: The task scorer's description: metric names, directions and meanings for the tables.
    description: ScorerDescription
    selection: str
    #: Whether the viewer is on the submitting team, organizes the competition, or neither.
    own: bool
    organizer: bool
    #: How the scoring program ran (phases scored by a program): its logs for organizers only.
    program_run: ProgramRunView | None = None


@dataclass(frozen=True)
class ProgramRunView:
    """The latest run of a scoring program on the submission, as the viewer may see it.

    Organizers read how it ended and the ends of its stdout and stderr (``logs``); the team reads the
    program's detailed results page (sanitized when it was stored) where the phase's numbers are visible
    to it, never the logs (its failure message says what it may know).
    """

    detailed_html: str | None
    logs: results.ProgramLogs | None


def program_run(session: Session, submission_id: int, *, organizer: bool, details: bool) -> ProgramRunView | None:
    """The latest program run of the submission: logs for ``organizer``, the detailed results with ``details``."""
    run = results.latest_program_run(session, submission_id)
    if run is None or not (organizer or details):
        return None
    return ProgramRunView(run.detailed_html if details else None, results.program_logs(run) if organizer else None)


def _not_found(submission_id: int) -> NotFound:
    return NotFound(f"there is no submission {submission_id} that you may see")


def view_submission(session: Session, viewer: User | None, submission_id: int, boards: BoardCache) -> SubmissionView:
    """The submission as ``viewer`` may see it; ``NotFound`` when they may not see it at all."""
    submission = session.get(Submission, submission_id)
    if submission is None:
        raise _not_found(submission_id)
    phase = session.get(Phase, submission.phase_id)
    assert phase is not None
    task = phase.task
    ref = (task.competition.slug, task.slug, phase.slug)
    description = task_description(task)
    organizer = is_organizer(session, viewer, task.competition_id)
    record: SubmissionRecord | None = None
    if viewer is not None:
        try:
            record = results.show(session, viewer, submission_id)
        except NotFound:
            record = None
    if record is not None:
        team = team_of(session, viewer, task.competition_id) if viewer is not None else None
        own = team is not None and team.id == submission.team_id
        run = program_run(session, submission_id, organizer=organizer, details=organizer or phase.metrics_public)
        return SubmissionView(record, ref, description, phase.selection, own=own, organizer=organizer, program_run=run)

    if boards.get(ref, "public").entry_for(submission_id) is None:
        raise _not_found(submission_id)
    score = results.current_scores(session, [submission_id], full=True).get(submission_id)
    team = session.get(Team, submission.team_id) if submission.team_id is not None else None
    shown = results.describe(
        submission, score, phase=phase, organizer=False, team_name=team.name if team else None, detail=True
    )
    # What the leaderboard already makes public, and its breakdowns: never the file or the messages.
    public = replace(shown, original_name="", size=0, sha256="", message="", chosen=False, queue_position=None)
    return SubmissionView(public, ref, description, phase.selection, own=False, organizer=False)
