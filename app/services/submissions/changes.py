"""What organizers and teams may change about submissions: rescoring (a new round) and the choice that counts."""

from __future__ import annotations

from sqlalchemy import exists, func, select, update
from sqlalchemy.orm import Session

from app.services.accounts.access import require_organizer
from app.services.errors import Conflict, Forbidden
from app.services.jobs.enqueue import enqueue_after_commit
from app.services.scoring.job import SCORE_SUBMISSION
from app.services.submissions.quota import lock_entry
from app.services.submissions.results import context_of, get_submission
from app.storage.models import CodeRun, Phase, RunStatus, Submission, SubmissionStatus, User

RESCORABLE = (SubmissionStatus.SCORED, SubmissionStatus.FAILED)
#: A submission of a code phase whose program gave no predictions has nothing to score: its file is the program.
_NO_PREDICTIONS = exists().where(CodeRun.submission_id == Submission.id, CodeRun.status != RunStatus.SUCCEEDED)


def _queue_rescore(session: Session, submission_id: int) -> bool:
    """Open the submission's next scoring round unless it is queued or running; returns whether it did.

    A compare-and-set on the row, not a read then a write: two organizers rescoring at once (on
    PostgreSQL both would read the same round) must open one round, not two answers for one round.
    """
    result = session.execute(
        update(Submission)
        .where(Submission.id == submission_id, Submission.status.in_(RESCORABLE), ~_NO_PREDICTIONS)
        .values(
            scoring_round=Submission.scoring_round + 1,
            status=SubmissionStatus.QUEUED,
            attempts=0,
            participant_message="",
            organizer_message="",
            lease_expires_at=None,
        )
        .execution_options(synchronize_session=False)
    )
    if getattr(result, "rowcount", 0) != 1:
        return False
    enqueue_after_commit(session, SCORE_SUBMISSION, submission_id)
    return True


def rescore(session: Session, user: User | None, submission_id: int) -> Submission:
    """Score the submission again: a new round and a new score; the old scores stay. Whoever may not see
    the submission gets the "not found" of a missing one (ids leak nothing); a team member who may see it
    but does not organize is told so."""
    submission = get_submission(session, user, submission_id)
    require_organizer(session, user, context_of(session, submission)[2])
    queued = _queue_rescore(session, submission_id)
    session.refresh(submission)
    if not queued and submission.status in RESCORABLE:
        raise Conflict(f"submission {submission_id} has no predictions to score: its program gave none")
    if not queued:
        raise Conflict(f"submission {submission_id} is {submission.status}; rescore it once it is scored or failed")
    return submission


def rescore_phase(session: Session, user: User | None, phase: Phase) -> int:
    """Rescore every scored or failed submission of the phase; returns how many were queued."""
    require_organizer(session, user, phase.task.competition)
    query = select(Submission.id).where(Submission.phase_id == phase.id, Submission.status.in_(RESCORABLE))
    return sum(_queue_rescore(session, submission_id) for submission_id in list(session.scalars(query)))


def choose(session: Session, user: User | None, submission_id: int) -> Submission:
    """Mark the submission as one that counts for its team: the one (phases whose selection is ``chosen``: the mark
    moves to it), or one of its final submissions (phases with ``final_submissions``: up to that many marks)."""
    submission = get_submission(session, user, submission_id)
    if submission.is_baseline:
        raise Forbidden("baseline runs are not chosen by teams")
    if submission.status == SubmissionStatus.FAILED:
        raise Conflict("a failed submission cannot be chosen")
    phase = context_of(session, submission)[0]
    if phase.final_submissions is not None:
        _mark_final(session, submission, phase.final_submissions)
        session.refresh(submission)
        return submission
    session.execute(
        update(Submission)
        .where(Submission.phase_id == submission.phase_id, Submission.team_id == submission.team_id)
        .values(chosen=Submission.id == submission.id)
        .execution_options(synchronize_session=False)
    )
    session.refresh(submission)
    return submission


def _mark_final(session: Session, submission: Submission, allowed: int) -> None:
    """Add the submission to its team's final ones, unless the team marked ``allowed`` others already. The team's
    entry row is locked first (``quota.lock_entry``), so two marks sent at once cannot both pass the count."""
    if submission.team_id is not None:
        lock_entry(session, submission.phase_id, submission.team_id)
    marked = session.scalar(
        select(func.count(Submission.id)).where(
            Submission.phase_id == submission.phase_id,
            Submission.team_id == submission.team_id,
            Submission.chosen,
            Submission.id != submission.id,
        )
    )
    if (marked or 0) >= allowed:
        raise Conflict(
            f"your team has marked {allowed} final submission{'s' if allowed != 1 else ''} already, the most this "
            "phase takes: unmark one first",
            code="too_many_final",
        )
    session.execute(
        update(Submission)
        .where(Submission.id == submission.id)
        .values(chosen=True)
        .execution_options(synchronize_session=False)
    )


def unchoose(session: Session, user: User | None, submission_id: int) -> Submission:
    """Take the team's mark off the submission (a final submission it no longer wants to count)."""
    submission = get_submission(session, user, submission_id)
    if submission.is_baseline:
        raise Forbidden("baseline runs are not chosen by teams")
    session.execute(
        update(Submission)
        .where(Submission.id == submission.id)
        .values(chosen=False)
        .execution_options(synchronize_session=False)
    )
    session.refresh(submission)
    return submission
