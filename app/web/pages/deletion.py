"""The page action of a team deleting one of its submissions (the button on its submissions page); what may be
deleted is ``app.services.submissions.deletion``'s to say."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response

from app.services.submissions import deletion, results
from app.web import sessions
from app.web.csrf import require_csrf
from app.web.deps import RowId, SessionDep
from app.web.pages import urls
from app.web.pages.confirm import Confirmed, Question, confirm_first
from app.web.pages.render import PageRoute, redirect
from app.web.sessions import LoggedIn

router = APIRouter(route_class=PageRoute, include_in_schema=False)

DELETE_SUBMISSION = Question(
    question="Delete submission {title}?",
    details=[
        "Its file, its scores and its place on the leaderboard go; the board is ranked again without it.",
        "This cannot be undone. It does not give the submission back to the team's limits of the day.",
    ],
    button="Yes, delete it",
)


@router.post("/submissions/{submission_id}/delete", dependencies=[Depends(require_csrf)])
def delete(
    submission_id: RowId, request: Request, session: SessionDep, viewer: LoggedIn, confirmed: Confirmed = ""
) -> Response:
    """Ask first; once confirmed, delete the submission and go back to the team's submissions of its phase."""
    phase, task, competition = results.context_of(session, results.get_submission(session, viewer, submission_id))
    ref = (competition.slug, task.slug, phase.slug)
    back = urls.phase_part(ref, "submissions")
    deletion.check_may_delete(session, viewer, submission_id)  # nobody but its team is even asked
    if asked := confirm_first(request, viewer, confirmed, DELETE_SUBMISSION, back=back, title=str(submission_id)):
        return asked
    deletion.delete_submission(session, viewer, submission_id)
    sessions.flash(request, f"Submission {submission_id} is deleted.")
    return redirect(back)
