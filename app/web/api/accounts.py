"""Accounts, API tokens and teams."""

from __future__ import annotations

from fastapi import APIRouter, Request
from sqlalchemy.orm import Session
from starlette.status import HTTP_201_CREATED

from app.services.accounts import teams, users
from app.services.competitions import catalog
from app.services.errors import Forbidden, NotFound
from app.storage.models import Team, User
from app.web.deps import CurrentUser, SessionDep, StateDep, client_address
from app.web.schemas.accounts import (
    PasswordChange,
    SignedOut,
    TeamCreate,
    TeamJoin,
    TeamOut,
    TeamRename,
    TokenCreate,
    TokenOut,
    UserCreate,
    UserOut,
)
from app.web.schemas.common import ErrorOut, retry_after_header

router = APIRouter(tags=["accounts"])


def _team(session: Session, team: Team, viewer: User) -> TeamOut:
    return TeamOut.of(team, teams.members(session, team), viewer)


@router.post(
    "/users",
    status_code=HTTP_201_CREATED,
    response_model=UserOut,
    responses={403: {"model": ErrorOut}, 409: {"model": ErrorOut}, 422: {"model": ErrorOut}},
)
def register(body: UserCreate, session: SessionDep, state: StateDep) -> UserOut:
    """Create an account (when the server allows registration)."""
    if not state.settings.allow_registration:
        raise Forbidden("this server does not allow registration; ask its administrators for an account")
    return UserOut.of(users.create_user(session, body.name, body.password, email=body.email))


@router.post(
    "/tokens",
    status_code=HTTP_201_CREATED,
    response_model=TokenOut,
    responses={
        401: {"model": ErrorOut, "description": "wrong name or password"},
        429: {
            "model": ErrorOut,
            "description": "too many failed logins for this name or from this address: `retry_after` (and the "
            "`Retry-After` header) says how many seconds to wait",
            "headers": retry_after_header(required=True),
        },
    },
)
def create_token(body: TokenCreate, request: Request, state: StateDep, session: SessionDep) -> TokenOut:
    """Exchange a user name and password for an API token (shown only in this answer). Throttled like
    the login page, with the same counters, so the API is no way around the page's limit."""
    address = client_address(request)
    user = state.throttle.attempt(
        session, body.name, address, lambda: users.authenticate(session, body.name, body.password)
    )
    return TokenOut(token=users.issue_token(session, user, body.label), user=user.name)


@router.get("/me", response_model=UserOut, responses={401: {"model": ErrorOut}})
def me(user: CurrentUser) -> UserOut:
    return UserOut.of(user)


@router.post(
    "/me/password",
    response_model=SignedOut,
    responses={401: {"model": ErrorOut}, 422: {"model": ErrorOut}, 429: {"model": ErrorOut}},
)
def change_password(
    body: PasswordChange, request: Request, state: StateDep, session: SessionDep, user: CurrentUser
) -> SignedOut:
    """Change your password (the current one is checked, throttled like a login). Every browser
    session ends and every API token is revoked, the one of this request included: get a new one
    with ``POST /api/v1/tokens``."""
    users.check_password(body.new_password)
    changed, tokens = state.throttle.attempt(
        session,
        user.name,
        client_address(request),
        lambda: users.change_password_of(session, user.id, body.current_password, body.new_password),
    )
    return SignedOut(user=changed.name, tokens_revoked=tokens)


@router.post(
    "/users/{name}/sign-out",
    response_model=SignedOut,
    responses={401: {"model": ErrorOut}, 403: {"model": ErrorOut}, 404: {"model": ErrorOut}},
)
def sign_out_everywhere(name: str, session: SessionDep, user: CurrentUser) -> SignedOut:
    """Site admins: end every browser session of the user and revoke every API token of theirs."""
    if not user.is_admin:
        raise Forbidden("only site admins may sign other users out")
    target = users.get_user(session, name)
    return SignedOut(user=target.name, tokens_revoked=users.sign_out_everywhere(session, target))


@router.get("/competitions/{competition}/team", response_model=TeamOut)
def my_team(competition: str, session: SessionDep, user: CurrentUser) -> TeamOut:
    """Your team in the competition (with its invite code)."""
    competition_row = catalog.get_competition(session, competition)
    team = teams.team_of(session, user, competition_row.id)
    if team is None:
        raise NotFound(f"you are not in a team of {competition!r}; your first submission creates a team of one")
    return _team(session, team, user)


@router.post("/competitions/{competition}/teams", status_code=HTTP_201_CREATED, response_model=TeamOut)
def create_team(competition: str, body: TeamCreate, session: SessionDep, user: CurrentUser) -> TeamOut:
    """Found a team; share its invite code with your teammates."""
    competition_row = catalog.get_competition(session, competition)
    return _team(session, teams.create_team(session, user, competition_row, body.name), user)


@router.post("/competitions/{competition}/teams/join", response_model=TeamOut)
def join_team(competition: str, body: TeamJoin, session: SessionDep, user: CurrentUser) -> TeamOut:
    """Join a team with its invite code."""
    competition_row = catalog.get_competition(session, competition)
    return _team(session, teams.join_team(session, user, competition_row, body.invite_code), user)


@router.patch("/competitions/{competition}/team", response_model=TeamOut)
def rename_team(competition: str, body: TeamRename, session: SessionDep, user: CurrentUser) -> TeamOut:
    """Rename your team (its founder only); the name must be free in the competition."""
    competition_row = catalog.get_competition(session, competition)
    return _team(session, teams.rename_team(session, user, competition_row, body.name), user)


@router.post("/competitions/{competition}/team/leave", response_model=TeamOut)
def leave_team(competition: str, session: SessionDep, user: CurrentUser) -> TeamOut:
    """Leave your team of several; it keeps its submissions and what they count against its limits. Having
    submitted for it, you may only rejoin it in this competition."""
    competition_row = catalog.get_competition(session, competition)
    return _team(session, teams.leave_team(session, user, competition_row), user)


@router.delete("/competitions/{competition}/team/members/{name}", response_model=TeamOut)
def remove_member(competition: str, name: str, session: SessionDep, user: CurrentUser) -> TeamOut:
    """Take a member out of your team (its founder only); the team gets a new invite code."""
    competition_row = catalog.get_competition(session, competition)
    return _team(session, teams.remove_member(session, user, competition_row, name), user)
