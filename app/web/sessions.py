"""Browser sessions of the pages: a signed cookie that says who is logged in.

The cookie is Starlette's ``SessionMiddleware`` (itsdangerous-signed, so it cannot be forged or
altered; it is not encrypted, so it holds nothing secret: a user id, the user's session version,
the CSRF token and one-shot messages). It is ``HttpOnly`` (scripts cannot read it),
``SameSite=Lax`` (other sites' forms do not carry it) and ``Secure`` when ``PODIUM_COOKIE_SECURE``
is set (behind HTTPS).

A signed cookie cannot be taken back, so the server decides whether it still counts: it holds the
user's ``session_version`` from when it started, and every request compares it with the database's
(the user is read on each request anyway). Logging out, a new password and an admin's "sign out
everywhere" bump the version (``app.services.accounts.users``), so every cookie of that user, copies
included, is anonymous from then on. The JSON API does not use this cookie; it takes bearer tokens.
"""

from __future__ import annotations

import logging
import secrets
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from starlette.middleware.sessions import SessionMiddleware

from app.config import Settings
from app.services.accounts import users
from app.services.errors import NotAuthenticated
from app.storage.models import User
from app.web.deps import StateDep
from app.web.state import AppState

log = logging.getLogger(__name__)

COOKIE = "podium_session"
MAX_AGE_SECONDS = 14 * 24 * 3600
USER_KEY = "uid"
VERSION_KEY = "ver"
FLASH_KEY = "flash"


class LoginRequired(NotAuthenticated):
    """A page that needs a logged-in user; pages answer it with a redirect to the login form."""


def install(app: FastAPI, settings: Settings) -> None:
    """Add the session cookie to ``app``; without ``secret_key`` a random key is used (sessions then
    end when the process does, and several processes do not share them)."""
    key = settings.secret_key
    if not key:
        log.warning("PODIUM_SECRET_KEY is not set: sessions are signed with a random key and end at restart")
        key = secrets.token_urlsafe(32)
    app.add_middleware(
        SessionMiddleware,
        secret_key=key,
        session_cookie=COOKIE,
        max_age=MAX_AGE_SECONDS,
        same_site="lax",
        https_only=settings.cookie_secure,
    )


def log_in(request: Request, user: User) -> None:
    """Start a fresh session for ``user`` (a new CSRF token too: nothing carries over from before)."""
    request.session.clear()
    request.session[USER_KEY] = user.id
    request.session[VERSION_KEY] = user.session_version


def forget(request: Request) -> None:
    """Drop this browser's cookie (its session may live on elsewhere: see ``log_out``)."""
    request.session.clear()


def log_out(request: Request, state: AppState) -> None:
    """End every session of the logged-in user, this one and any copy of its cookie."""
    user_id = request.session.get(USER_KEY)
    forget(request)
    if user_id is None:
        return
    with state.db.session() as session:
        user = session.get(User, user_id)
        if user is not None:
            users.end_sessions(session, user)
            session.commit()


def get_viewer(request: Request, state: StateDep) -> User | None:
    """The logged-in user, or ``None``; a session whose user is gone, or whose sessions were ended
    since it started, is dropped."""
    user_id = request.session.get(USER_KEY)
    if user_id is None:
        return None
    with state.db.session(read_only=True) as session:
        user = session.get(User, user_id)
    if user is None or request.session.get(VERSION_KEY) != user.session_version:
        forget(request)
        return None
    return user


def require_viewer(user: Annotated[User | None, Depends(get_viewer)]) -> User:
    if user is None:
        raise LoginRequired("log in to see this page")
    return user


Viewer = Annotated[User | None, Depends(get_viewer)]
LoggedIn = Annotated[User, Depends(require_viewer)]


def flash(request: Request, message: str, kind: str = "ok") -> None:
    """A message shown once, on the next page (after a redirect)."""
    messages: list[Any] = list(request.session.get(FLASH_KEY, []))
    messages.append([kind, message])
    request.session[FLASH_KEY] = messages[-5:]


def take_flashes(request: Request) -> list[tuple[str, str]]:
    if FLASH_KEY not in request.session:
        return []
    return [(str(kind), str(text)) for kind, text in request.session.pop(FLASH_KEY)]
