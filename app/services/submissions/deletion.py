"""A team deleting one of its own submissions.

Only a member of the submission's team deletes it (an organizer, who sees every submission, is refused; anyone
else is told there is no such submission, as ``results.get_submission`` answers). Refused too:

- a baseline run (the organizers' own, not a team's);
- a submission still waiting or being scored or run: its job would find its row gone (delete it once it ends);
- a submission the final ranking of a revealed board shows (the phase's ``revealed_at`` is set and the main
  board's entry for its team is this submission): that ranking is kept for the record.

Its scores, code run and logs go with it (``ON DELETE CASCADE``); its board recomputes, since the phase's
fingerprint counts its submissions (``boards.staleness``); its bytes no longer count against the storage quotas,
but it still counts against the phase's daily and total limits (a ``DeletedSubmission`` keeps when it was sent):
deleting must not give a team more tries at the test set.
The file's contents stay in the blob store until nothing refers to them (``app.storage.collect``).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.services.accounts.access import require_user
from app.services.accounts.teams import team_of
from app.services.boards.snapshot import compute_snapshot
from app.services.errors import Conflict, Forbidden
from app.services.submissions.quota import lock_entry
from app.services.submissions.results import context_of, get_submission
from app.storage.models import CodeRun, DeletedSubmission, Phase, RunStatus, Submission, SubmissionStatus, User

#: The statuses in which a submission's job is over: nothing will write to it again unless rescored.
ENDED = (SubmissionStatus.SCORED, SubmissionStatus.FAILED)


def on_final_ranking(session: Session, submission: Submission) -> bool:
    """Whether a revealed board's final ranking shows the submission (its team's counting entry)."""
    return submission.id in kept_for_record(session, context_of(session, submission)[0])


def kept_for_record(session: Session, phase: Phase) -> frozenset[int]:
    """The submissions a revealed board's final ranking shows (each team's counting entry); none before the
    reveal. Nobody deletes these: the ranking is the competition's record."""
    if phase.revealed_at is None:
        return frozenset()
    snapshot = compute_snapshot(session, phase, "public", 0)
    return frozenset(entry.candidate.submission_id for entry in snapshot.entries)


def being_run(session: Session, submission_ids: Iterable[int]) -> frozenset[int]:
    """Those of the submissions a worker holds right now (being scored, or its code being run): its job would
    write to rows that are gone. A queued one is held by nobody: a worker that claims it later finds nothing."""
    ids = list(submission_ids)
    if not ids:
        return frozenset()
    scored = select(Submission.id).where(Submission.id.in_(ids), Submission.status == SubmissionStatus.RUNNING)
    ran = select(CodeRun.submission_id).where(CodeRun.submission_id.in_(ids), CodeRun.status == RunStatus.RUNNING)
    return frozenset(session.scalars(scored)) | frozenset(session.scalars(ran))


def remove(session: Session, submissions: Iterable[Submission]) -> int:
    """Delete the submissions, each a team's still counting against its phase's limits (``DeletedSubmission``);
    how many there were. The caller checked that nothing keeps them."""
    ids = []
    for submission in submissions:
        if submission.team_id is not None and not submission.quota_refunded and not submission.is_baseline:
            session.add(
                DeletedSubmission(
                    phase_id=submission.phase_id,
                    team_id=submission.team_id,
                    submission_id=submission.id,
                    submitted_at=submission.created_at,
                )
            )
        ids.append(submission.id)
    if ids:
        session.flush()
        session.execute(delete(Submission).where(Submission.id.in_(ids)))
    return len(ids)


def _own_submission(session: Session, user: User | None, submission_id: int) -> tuple[Submission, int]:
    """The submission and its team's id, if the user's team sent it; refused otherwise (see the module)."""
    user = require_user(user)
    submission = get_submission(session, user, submission_id)
    competition = context_of(session, submission)[2]
    if submission.is_baseline:
        raise Forbidden("a baseline run is the organizers'; no team deletes it")
    team = team_of(session, user, competition.id)
    if team is None or submission.team_id != team.id:
        raise Forbidden("only the team that sent a submission may delete it")
    return submission, team.id


def check_may_delete(session: Session, user: User | None, submission_id: int) -> None:
    """Refuse, as deleting would, a user whose team did not send the submission (the page asks nobody else)."""
    _own_submission(session, user, submission_id)


def delete_submission(session: Session, user: User | None, submission_id: int) -> None:
    """Delete the submission, if it is the user's team's and nothing keeps it (see the module)."""
    submission, team_id = _own_submission(session, user, submission_id)
    lock_entry(session, submission.phase_id, team_id)  # no mark or upload of the team's interleaves
    session.refresh(submission)
    if submission.status not in ENDED:
        raise Conflict(
            f"submission {submission.id} is {submission.status.value.replace('_', ' ')}: delete it once it is "
            "scored or failed",
            code="submission_busy",
        )
    if on_final_ranking(session, submission):
        raise Conflict(
            f"submission {submission.id} is on the final ranking of a revealed board, which is kept for the record: "
            "it cannot be deleted",
            code="on_final_ranking",
        )
    remove(session, [submission])  # it counted against the phase's limits, and keeps counting
    session.expunge(submission)
