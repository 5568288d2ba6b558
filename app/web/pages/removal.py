"""The page actions of organizers deleting a competition or a phase's submissions and of site admins deleting an
account: each asks first (``confirm.confirm_first``), only of those who may act; what each keeps is the services'
to say (``competitions.removal``, ``submissions.clearing``, ``accounts.removal``)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response

from app.services.accounts import removal as accounts_removal
from app.services.accounts import users
from app.services.accounts.access import require_organizer
from app.services.competitions import catalog
from app.services.competitions import removal as competitions_removal
from app.services.errors import Conflict, Forbidden
from app.services.submissions import clearing
from app.web import sessions
from app.web.csrf import require_csrf
from app.web.deps import PhaseRef, SessionDep
from app.web.pages import urls
from app.web.pages.confirm import Confirmed, Question, confirm_first
from app.web.pages.forms import TeamName, UserName
from app.web.pages.render import PageRoute, redirect
from app.web.sessions import LoggedIn

router = APIRouter(route_class=PageRoute, include_in_schema=False)
CSRF = [Depends(require_csrf)]

DELETE_COMPETITION = Question(
    question="Delete the competition {title}?",
    details=[
        "Everything of it goes: its tasks and phases with their files, its teams, every submission with its scores "
        "and logs, its leaderboards, its worker queues and their credentials. Nothing of it is kept.",
        "This cannot be undone.",
    ],
    button="Yes, delete the competition",
)
DELETE_SUBMISSIONS = Question(
    question="Delete {title}?",
    details=[
        "Their files, scores and places on the leaderboard go; the board is ranked again without them. Those a "
        "revealed board's final ranking shows are kept for the record, and those being scored stay until they end.",
        "This cannot be undone. What is deleted still counts against each team's limits.",
    ],
    button="Yes, delete them",
)
DELETE_USER = Question(
    question="Delete the account {title}?",
    details=[
        "Its email, password, sessions and API tokens go at once, and so do its teams and submissions, except what "
        "a revealed board's final ranking keeps: that stays under the name 'deleted user #N'.",
        "This cannot be undone.",
    ],
    button="Yes, delete the account",
)


@router.post("/c/{competition}/organize/delete", dependencies=CSRF)
def delete_competition(
    competition: str, request: Request, session: SessionDep, viewer: LoggedIn, confirmed: Confirmed = ""
) -> Response:
    """Ask first; once confirmed, delete the competition and go to the home page."""
    competition_row = catalog.get_competition(session, competition)
    require_organizer(session, viewer, competition_row)  # nobody else is even asked
    back = f"{urls.competition(competition)}/organize"
    if asked := confirm_first(request, viewer, confirmed, DELETE_COMPETITION, back=back, title=competition_row.title):
        return asked
    removed = competitions_removal.delete_competition(session, viewer, competition)
    sessions.flash(
        request,
        f"The competition {competition} is deleted, with {removed.submissions} submission(s) of {removed.teams} "
        "team(s).",
    )
    return redirect("/")


@router.post("/c/{competition}/{task}/{phase}/organize/delete-submissions", dependencies=CSRF)
def delete_phase_submissions(
    ref: PhaseRef,
    request: Request,
    session: SessionDep,
    viewer: LoggedIn,
    team: TeamName = "",
    confirmed: Confirmed = "",
) -> Response:
    """Ask first; once confirmed, delete the phase's submissions (only ``team``'s when the form names one)."""
    phase_row = catalog.get_phase(session, *ref)
    require_organizer(session, viewer, phase_row.task.competition)
    back = urls.phase_part(ref, "organize")
    team = team.strip()
    if team:
        clearing.team_named(session, phase_row, team)  # a team that is not there is said so before asking
    what = f"team {team}'s submissions to {phase_row.title}" if team else f"every submission to {phase_row.title}"
    asked = confirm_first(
        request, viewer, confirmed, DELETE_SUBMISSIONS, back=back, title=what, fields={"team": team} if team else None
    )
    if asked:
        return asked
    cleared = clearing.delete_phase_submissions(session, viewer, phase_row, team or None)
    stayed = []
    if cleared.kept_for_record:
        stayed.append(f"{len(cleared.kept_for_record)} kept for the record (on the final ranking)")
    if cleared.busy:
        stayed.append(f"{len(cleared.busy)} being scored (delete them once they end)")
    sessions.flash(request, f"{cleared.deleted} submission(s) deleted" + (f"; {', '.join(stayed)}." if stayed else "."))
    return redirect(back)


@router.post("/account/delete-user", dependencies=CSRF)
def delete_user(
    request: Request, session: SessionDep, viewer: LoggedIn, name: UserName = "", confirmed: Confirmed = ""
) -> Response:
    """Site admins: ask first; once confirmed, delete the account and go back to the account page."""
    if not viewer.is_admin:
        raise Forbidden("only site admins may delete accounts")
    target = users.get_user(session, name.strip())
    if target.is_deleted:  # said before asking
        raise Conflict(f"{target.name!r} is a deleted account already", code="already_deleted")
    asked = confirm_first(
        request, viewer, confirmed, DELETE_USER, back="/account", title=target.name, fields={"name": target.name}
    )
    if asked:
        return asked
    removed = accounts_removal.delete_user(session, viewer, target.name)
    sessions.flash(
        request,
        f"The account {name.strip()} is deleted: {removed.submissions_deleted} submission(s) deleted, "
        f"{removed.submissions_kept} kept for the record under '{removed.user}'.",
    )
    return redirect("/account")
