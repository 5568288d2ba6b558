"""CSRF protection of the pages' forms: a random token per session, checked on every POST.

The token lives in the signed session cookie and is repeated in a hidden ``csrf_token`` field of
every form (or the ``X-CSRF-Token`` header of a script's request). A request that does not carry
the session's token is refused before anything is done. ``SameSite=Lax`` on the cookie already
keeps other sites' forms from acting as the user; the token also covers older browsers and
same-site subdomains.
"""

from __future__ import annotations

import hmac
import secrets

from fastapi import Request

from app.services.errors import Forbidden

TOKEN_KEY = "csrf"  # noqa: S105  (the session key the token is kept under, not a secret)
FIELD = "csrf_token"
HEADER = "X-CSRF-Token"


class CsrfRefused(Forbidden):
    default_code = "csrf_failed"


def csrf_token(request: Request) -> str:
    """The session's token, created on first use."""
    token = request.session.get(TOKEN_KEY)
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(32)
        request.session[TOKEN_KEY] = token
    return token


def check_token(request: Request, sent: object) -> None:
    """Refuse unless ``sent`` (or the header) is the session's token."""
    expected = request.session.get(TOKEN_KEY)
    candidate = sent if isinstance(sent, str) and sent else request.headers.get(HEADER, "")
    if not isinstance(expected, str) or not expected or not hmac.compare_digest(candidate.encode(), expected.encode()):
        raise CsrfRefused("This form has expired or did not come from this site. Reload the page and send it again.")


async def require_csrf(request: Request) -> None:
    """Dependency of URL-encoded form posts: reads the form (Starlette keeps it for the handler)."""
    form = await request.form()
    check_token(request, form.get(FIELD))
