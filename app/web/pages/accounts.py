"""Accounts on the pages: register, log in (throttled), log out, the account page (a new password),
reset links, teams, and asking to take part."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.orm import Session

from app.services.accounts import teams, users
from app.services.accounts.throttle import LoginThrottled
from app.services.competitions import catalog, participation
from app.services.errors import Forbidden, NotAuthenticated, ServiceError
from app.storage.models import Competition, User
from app.web import sessions
from app.web.csrf import require_csrf
from app.web.deps import SessionDep, client_address
from app.web.pages import urls
from app.web.pages.forms import Email, InviteCode, Next, Password, TeamName, UserName
from app.web.pages.render import PageRoute, form_again, get_pages, redirect, render
from app.web.schemas.common import wait_headers
from app.web.sessions import LoggedIn, Viewer

router = APIRouter(route_class=PageRoute, include_in_schema=False)
CSRF = [Depends(require_csrf)]
#: The token of a reset link is in the page's address: never send it on to another site.
NO_REFERRER = {"Referrer-Policy": "no-referrer"}


@router.get("/login")
def login_form(request: Request, viewer: Viewer, next: str = "") -> Response:
    context = {"next": urls.safe_next(next), "name": "", "error": None}
    return render(request, "login.html", context, viewer=viewer)


@router.post("/login", dependencies=CSRF)
def login(
    request: Request, session: SessionDep, name: UserName = "", password: Password = "", next: Next = ""
) -> Response:
    """Check the password (unless the name or the address is throttled) and start a session."""
    throttle = get_pages(request).state.throttle
    context = {"next": urls.safe_next(next), "name": name}
    try:
        user = throttle.attempt(
            session, name, client_address(request), lambda: users.authenticate(session, name, password)
        )
    except LoginThrottled as exc:
        return render(
            request, "login.html", {**context, "error": exc}, viewer=None, status=429, headers=wait_headers(exc)
        )
    except NotAuthenticated as exc:
        return render(request, "login.html", {**context, "error": exc}, viewer=None, status=401)
    sessions.log_in(request, user)
    return redirect(urls.safe_next(next))


@router.post("/logout", dependencies=CSRF)
def logout(request: Request) -> Response:
    """End every session of the user (this browser's and any other), not only this cookie."""
    sessions.log_out(request, get_pages(request).state)
    return redirect("/")


@router.get("/account")
def account_page(request: Request, viewer: LoggedIn) -> Response:
    return render(request, "account.html", {"error": None}, viewer=viewer)


@router.post("/account/password", dependencies=CSRF)
def change_password(
    request: Request,
    session: SessionDep,
    viewer: LoggedIn,
    current_password: Password = "",
    new_password: Password = "",
    new_password_again: Password = "",
) -> Response:
    """A new password: every other session ends and every API token is revoked; this one goes on."""
    state = get_pages(request).state
    try:
        if new_password != new_password_again:
            raise ServiceError("the two new passwords differ; type the same password twice", code="password_mismatch")
        users.check_password(new_password)
        user, tokens = state.throttle.attempt(
            session,
            viewer.name,
            client_address(request),
            lambda: users.change_password_of(session, viewer.id, current_password, new_password),
        )
    except ServiceError as exc:
        return form_again(request, session, "account.html", {}, exc, viewer=viewer, headers=wait_headers(exc))
    session.commit()
    sessions.log_in(request, user)
    revoked = f" and {tokens} API token{'' if tokens == 1 else 's'} revoked" if tokens else ""
    sessions.flash(request, f"Your password was changed: every other session was ended{revoked}.")
    return redirect("/account")


@router.post("/account/sign-out", dependencies=CSRF)
def sign_out_user(request: Request, session: SessionDep, viewer: LoggedIn, name: UserName = "") -> Response:
    """Site admins: end every session of a user and revoke their API tokens ("sign out everywhere")."""
    if not viewer.is_admin:
        raise Forbidden("only site admins may sign other users out")
    target = users.get_user(session, name.strip())
    tokens = users.sign_out_everywhere(session, target)
    session.commit()
    sessions.flash(
        request, f"{target.name} was signed out everywhere: every session ended, {tokens} API token(s) revoked."
    )
    return redirect("/account")


@router.get("/reset/{token}")
def reset_form(token: str, request: Request, session: SessionDep, viewer: Viewer) -> Response:
    """The page behind a reset link (``podium user reset-link``): a new password, once."""
    user = users.reset_link_user(session, token)
    context = {"token": token, "name": user.name, "error": None}
    return render(request, "reset.html", context, viewer=viewer, headers=NO_REFERRER)


@router.post("/reset/{token}", dependencies=CSRF)
def reset(
    token: str,
    request: Request,
    session: SessionDep,
    viewer: Viewer,
    new_password: Password = "",
    new_password_again: Password = "",
) -> Response:
    """Set the password through the link, end every session of the user, and go to the login form."""
    try:
        user = users.reset_link_user(session, token)
        if new_password != new_password_again:
            raise ServiceError("the two passwords differ; type the same password twice", code="password_mismatch")
        users.use_reset_link(session, token, new_password)
    except ServiceError as exc:
        if exc.status == 404:
            raise  # no such link, or a used one: the error page (SessionDep rolls back on a raise)
        context = {"token": token, "name": user.name}
        return form_again(request, session, "reset.html", context, exc, viewer=viewer, headers=NO_REFERRER)
    session.commit()
    sessions.forget(request)
    sessions.flash(request, f"The password of {user.name} was set; every session was ended. Log in with it.")
    return redirect(urls.login())


@router.get("/register")
def register_form(request: Request, viewer: Viewer, next: str = "") -> Response:
    context = {"next": urls.safe_next(next), "name": "", "email": "", "error": None}
    return render(request, "register.html", context, viewer=viewer)


@router.post("/register", dependencies=CSRF)
def register(
    request: Request,
    session: SessionDep,
    name: UserName = "",
    password: Password = "",
    password_again: Password = "",
    email: Email = "",
    next: Next = "",
) -> Response:
    """Create the account and log it in."""
    if not get_pages(request).state.settings.allow_registration:
        raise Forbidden("this server does not allow registration; ask its administrators for an account")
    context = {"next": urls.safe_next(next), "name": name, "email": email}
    try:
        if password != password_again:
            raise ServiceError("the two passwords differ; type the same password twice", code="password_mismatch")
        user = users.create_user(session, name.strip(), password, email=email.strip() or None)
    except ServiceError as exc:
        return form_again(request, session, "register.html", context, exc, viewer=None)
    sessions.log_in(request, user)
    sessions.flash(request, f"Welcome, {user.name}. Your account is ready.")
    return redirect(urls.safe_next(next))


# -- teams and participation ---------------------------------------------------------------------------


@router.get("/c/{competition}/team")
def team_page(competition: str, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    competition_row = catalog.get_competition(session, competition)
    team = teams.team_of(session, viewer, competition_row.id)
    members = [u.name for u in teams.members(session, team)] if team is not None else []
    founder = members[:1] == [viewer.name]
    context = {"competition": competition_row, "team": team, "members": members, "founder": founder}
    return render(request, "team.html", context, viewer=viewer)


#: What each form of the team page does, and what it says once done.
_TEAM_ACTIONS: dict[str, Callable[[Session, User, Competition, str], str]] = {
    "create": lambda s, u, c, text: (
        f"You founded the team {teams.create_team(s, u, c, text).name}. Share its invite code with your teammates."
    ),
    "join": lambda s, u, c, text: f"You joined the team {teams.join_team(s, u, c, text.strip()).name}.",
    "rename": lambda s, u, c, text: f"Your team is now called {teams.rename_team(s, u, c, text).name}.",
    "leave": lambda s, u, c, _: f"You left the team {teams.leave_team(s, u, c).name}.",
    "remove": lambda s, u, c, text: (
        f"{text} is no longer in the team {teams.remove_member(s, u, c, text).name}; it has a new invite code."
    ),
}


def _team_action(request: Request, session: Session, competition: str, act: str, text: str, user: User) -> Response:
    """Change the user's team; a refusal becomes a message on the team page."""
    competition_row = catalog.get_competition(session, competition)
    try:
        sessions.flash(request, _TEAM_ACTIONS[act](session, user, competition_row, text))
    except ServiceError as exc:
        session.rollback()  # a refused change leaves nothing half done
        sessions.flash(request, exc.message, "error")
    return redirect(urls.team(competition))


@router.post("/c/{competition}/team/create", dependencies=CSRF)
def create_team(
    competition: str, request: Request, session: SessionDep, viewer: LoggedIn, name: TeamName = ""
) -> Response:
    return _team_action(request, session, competition, "create", name, viewer)


@router.post("/c/{competition}/team/join", dependencies=CSRF)
def join_team(
    competition: str, request: Request, session: SessionDep, viewer: LoggedIn, invite_code: InviteCode = ""
) -> Response:
    return _team_action(request, session, competition, "join", invite_code, viewer)


@router.post("/c/{competition}/team/rename", dependencies=CSRF)
def rename_team(
    competition: str, request: Request, session: SessionDep, viewer: LoggedIn, name: TeamName = ""
) -> Response:
    return _team_action(request, session, competition, "rename", name, viewer)


@router.post("/c/{competition}/team/leave", dependencies=CSRF)
def leave_team(competition: str, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    return _team_action(request, session, competition, "leave", "", viewer)


@router.post("/c/{competition}/team/remove", dependencies=CSRF)
def remove_member(
    competition: str, request: Request, session: SessionDep, viewer: LoggedIn, member: UserName = ""
) -> Response:
    return _team_action(request, session, competition, "remove", member, viewer)


@router.post("/c/{competition}/participate", dependencies=CSRF)
def participate(competition: str, request: Request, session: SessionDep, viewer: LoggedIn) -> Response:
    """Ask to take part in an approval-only competition (an open one approves at once)."""
    competition_row = catalog.get_competition(session, competition)
    row = participation.request_participation(session, viewer, competition_row)
    if row.approved_at is not None:
        sessions.flash(request, "You may take part: submit to any open phase.")
    else:
        sessions.flash(request, "Your request was sent; the organizers will approve it.")
    return redirect(urls.competition(competition))
