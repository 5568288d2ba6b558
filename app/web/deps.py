"""Dependencies of the API handlers: the state, a session per request, and the caller.

``SessionDep`` is the request's one transaction: it commits when the handler returns (before the
answer is sent, so a failed commit is an error answer, not a lost write) and rolls back when it
raises. GET and HEAD requests get a read-only session (on SQLite it does not take the write lock),
so they must not write. The caller is looked up in a short session of its own, so that no
transaction is open while a large upload streams in.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.requests import HTTPConnection
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from app.services.accounts import users
from app.services.accounts.access import require_user
from app.services.errors import InvalidInput, NotAuthenticated, NotFound
from app.services.jobs.kinds import QUEUE_KEY
from app.storage.models import User
from app.web.state import AppState

#: The one security scheme of the OpenAPI document (``HTTPBearer``). ``app.web.openapi`` marks the
#: operations that take ``OptionalUser`` alone (scheme ``OptionalHTTPBearer`` here) as open to anyone.
BEARER_SCHEME = "HTTPBearer"
OPTIONAL_BEARER_SCHEME = "OptionalHTTPBearer"
_TOKEN_DESCRIPTION = "An API token from `POST /api/v1/tokens` or `podium token create`."  # noqa: S105


class BearerToken(HTTPBearer):
    """``Authorization: Bearer <token>``, or no header at all (anonymous). Unlike FastAPI's
    ``HTTPBearer(auto_error=False)``, a header that is there but is not a bearer token (``Basic ...``,
    ``Bearer`` with nothing after it, anything else) is refused like a wrong token, never taken for no
    header: a client that thinks it sends credentials must not be served as anonymous."""

    async def __call__(self, request: HTTPConnection) -> HTTPAuthorizationCredentials | None:
        authorization = request.headers.get("Authorization")
        if authorization is None:
            return None
        scheme, _, credentials = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            raise NotAuthenticated("the Authorization header must be 'Bearer <token>' with an API token")
        return HTTPAuthorizationCredentials(scheme=scheme, credentials=credentials.strip())


_bearer = BearerToken(scheme_name=BEARER_SCHEME, auto_error=False, description=_TOKEN_DESCRIPTION)
_optional_bearer = BearerToken(scheme_name=OPTIONAL_BEARER_SCHEME, auto_error=False, description=_TOKEN_DESCRIPTION)


def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.podium
    return state


StateDep = Annotated[AppState, Depends(get_state)]


def get_session(request: Request, state: StateDep) -> Iterator[Session]:
    read_only = request.method in ("GET", "HEAD")
    session = state.db.session(read_only=read_only, info={QUEUE_KEY: state.queue})
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


SessionDep = Annotated[Session, Depends(get_session, scope="function")]


def client_address(request: Request) -> str:
    """The address the request came from (what login throttling counts per client)."""
    return request.client.host if request.client else "unknown"


def _token_owner(state: AppState, credentials: HTTPAuthorizationCredentials | None) -> User | None:
    if credentials is None:
        return None
    with state.db.session(read_only=True) as session:
        return users.user_for_token(session, credentials.credentials)


def get_optional_user(
    state: StateDep, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_optional_bearer)]
) -> User | None:
    """The token's owner, or ``None`` without a token; a wrong token is refused, never ignored."""
    return _token_owner(state, credentials)


def get_current_user(
    user: Annotated[User | None, Depends(get_optional_user)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    """The token's owner; refused without a token. (``credentials`` only puts the required scheme in
    the document: the owner was looked up once, by ``get_optional_user``, which every API route runs.)"""
    return require_user(user)


#: A row id in a path. Ids are 32-bit SQL integers (PostgreSQL's ``integer``), so a larger number would
#: reach the database and fail there (an error, not an answer); it is refused as invalid input instead.
RowId = Annotated[int, Path(ge=1, le=2**31 - 1)]


def _nul_problems(request: Request, places: tuple[str, ...]) -> list[dict[str, str]]:
    parameters = [("path", name, str(value)) for name, value in request.path_params.items()]
    parameters += [("query", name, value) for name, value in request.query_params.multi_items()]
    return [
        {"where": f"{place}.{name}", "message": "contains a NUL character"}
        for place, name, value in parameters
        if place in places and "\x00" in value
    ]


def refuse_nul_characters(request: Request) -> None:
    """Refuse a NUL character in the path or the query: no text column holds one (PostgreSQL refuses it
    even in a comparison), so a lookup by such a name would fail inside the database."""
    problems = _nul_problems(request, ("path", "query"))
    if problems:
        raise InvalidInput("the request was refused", problems)


def refuse_nul_in_page_address(request: Request) -> None:
    """The pages' version: an address whose path holds a NUL names no page (404); a NUL in the query
    is refused input."""
    if _nul_problems(request, ("path",)):
        raise NotFound("there is no page at this address")
    refuse_nul_characters(request)


def phase_ref(competition: str, task: str, phase: str) -> tuple[str, str, str]:
    """The phase a route's address names, as (competition, task, phase) slugs."""
    return (competition, task, phase)


#: The ``{competition}/{task}/{phase}`` of a route's path, as one value.
PhaseRef = Annotated[tuple[str, str, str], Depends(phase_ref)]
OptionalUser = Annotated[User | None, Depends(get_optional_user)]
CurrentUser = Annotated[User, Depends(get_current_user)]
