"""Browser sessions of the pages: a signed cookie that says who is logged in.

The cookie is Starlette's ``SessionMiddleware`` (itsdangerous-signed, so it cannot be forged or
altered; it is not encrypted, so it holds nothing secret: a user id, a fingerprint of the password
hash, the CSRF token and one-shot messages). It is ``HttpOnly`` (scripts cannot read it),
``SameSite=Lax`` (other sites' forms do not carry it) and ``Secure`` when ``PODIUM_COOKIE_SECURE``
is set (behind HTTPS). Changing the password ends every session of the account, because the
fingerprint no longer matches. The JSON API does not use this cookie; it takes bearer tokens.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from starlette.middleware.sessions import SessionMiddleware

from app.config import Settings
from app.services.errors import NotAuthenticated
from app.storage.models import User
from app.web.deps import StateDep

log = logging.getLogger(__name__)

COOKIE = "podium_session"
MAX_AGE_SECONDS = 14 * 24 * 3600
USER_KEY = "uid"
AUTH_KEY = "auth"
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


def _fingerprint(user: User) -> str:
    return hashlib.sha256(user.password_hash.encode()).hexdigest()[:24]


def log_in(request: Request, user: User) -> None:
    """Start a fresh session for ``user`` (a new CSRF token too: nothing carries over from before)."""
    request.session.clear()
    request.session[USER_KEY] = user.id
    request.session[AUTH_KEY] = _fingerprint(user)


def log_out(request: Request) -> None:
    request.session.clear()


def get_viewer(request: Request, state: StateDep) -> User | None:
    """The logged-in user, or ``None``; a session whose user is gone or changed password is ended."""
    user_id = request.session.get(USER_KEY)
    if user_id is None:
        return None
    with state.db.session(read_only=True) as session:
        user = session.get(User, user_id)
    if user is None or request.session.get(AUTH_KEY) != _fingerprint(user):
        log_out(request)
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
