"""The one place where errors become HTTP answers: JSON, ``{"error": code, "detail": ...}``, plus
``problems`` (each naming its place) for refused input, on the API and for any client that asks for
JSON; an HTML error page with the same words on the pages (``is_page``), so that a person who follows
a dead link or finds the database down reads a page of the site, not a JSON document.

Refusals that a page's own handler raises become pages in ``pages.render.PageRoute``; what is raised
before or around a handler (no such route, a method the route does not take, a path parameter of the
wrong type, the database down) comes here."""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Match

from app.services.bundles.spec import BundleError
from app.services.errors import NotAuthenticated, ServiceError, UploadTooLarge
from app.storage.models.base import TextRefused
from app.web.schemas.common import wait_headers

log = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "bad_request",
    401: "not_authenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "upload_too_large",
    415: "unsupported_media_type",
}

#: Paths that answer JSON whatever the client accepts: the API and the operators' routes.
JSON_PATHS = ("/api/", "/openapi.json", "/readyz", "/metrics", "/healthz")

#: The words of an error page for an error without a message of its own (404: ``_page_message``).
_PAGE_MESSAGES = {405: "This page cannot be used that way."}

_DATABASE_DOWN = "The database cannot be reached right now, so nothing was changed; please try again shortly."


def _page_message(status: int) -> str:
    """The words of an error page for ``status`` when the error has none of its own."""
    if status == 404:
        return str(_pages().NO_SUCH_PAGE)
    return _PAGE_MESSAGES.get(status, "")


def _pages() -> ModuleType:
    """``app.web.pages.render``, the pages' renderer (imported when first needed, so that the API alone
    never loads the templates)."""
    from app.web.pages import render

    return render


def is_page(request: Request) -> bool:
    """Whether an error on ``request`` is answered with an HTML page: any path outside the API and the
    operators' routes, unless the client asked for JSON (the pages' own scripts do)."""
    return not request.url.path.startswith(JSON_PATHS) and not _pages().wants_json(request)


def _answer(
    request: Request,
    status: int,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
    *,
    page_message: str = "",
    database: bool = True,
) -> Response:
    """``body`` as JSON, or as an error page on the pages (saying ``page_message``, else the body's
    detail); ``database=False`` when the database is down, so the page does not look the viewer up."""
    if is_page(request):
        problems = body.get("problems", [])
        message = page_message or str(body.get("detail", ""))
        render = _pages()
        error = render.ErrorPage(status, message, problems, body.get("total", len(problems)))
        return render.error_page(request, error, headers=headers, with_viewer=database)
    return JSONResponse(body, status_code=status, headers=headers or None)


def _service_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServiceError)
    headers = wait_headers(exc)
    if isinstance(exc, NotAuthenticated):
        headers["WWW-Authenticate"] = "Bearer"
    if isinstance(exc, UploadTooLarge):
        # The rest of the body was not read: closing the connection stops the client from sending it,
        # where keeping it alive would make the server read and discard the whole of it first.
        headers["Connection"] = "close"
    return _answer(request, exc.status, exc.to_dict(), headers)


def _bundle_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, BundleError)
    body: dict[str, Any] = {
        "error": "invalid_bundle",
        "detail": exc.summary(),
        "problems": [{"key": key, "message": message} for key, message in exc.problems],
        "total": len(exc.problems),
    }
    return _answer(request, 422, body)


def _text_refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, TextRefused)
    return _service_error(request, _pages().refused_text(exc))


def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    problems = [
        {"where": ".".join(str(part) for part in error.get("loc", ())), "message": str(error.get("msg", ""))}
        for error in exc.errors()
    ]
    body = {"error": "invalid_request", "detail": "the request was refused", "problems": problems}
    return _answer(request, 422, body)


#: The methods a 405 may name in ``Allow``.
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app takes at the request's path: several routes may share a path,
    and Starlette's 405 names only the first one's. Each method is tried against the routes as the
    router itself would match it."""
    routes = request.app.router.routes
    return [
        method
        for method in _METHODS
        if any(route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes)
    ]


def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        # Starlette names the methods of the first route with this path only.
        headers["Allow"] = ", ".join(allowed_methods(request)) or headers.get("Allow", "")
    code = _HTTP_CODES.get(exc.status_code, "error")
    body = {"error": code, "detail": str(exc.detail)}
    return _answer(request, exc.status_code, body, headers, page_message=_page_message(exc.status_code))


#: Seconds a client is asked to wait when the database cannot be reached.
DATABASE_RETRY_AFTER = 5


def _database_error(request: Request, exc: Exception) -> Response:
    # The request's transaction was rolled back (``deps.get_session``): nothing of it remains.
    log.warning("%s %s: the database is unavailable: %s", request.method, request.url.path, exc)
    body = {"error": "database_unavailable", "detail": _DATABASE_DOWN}
    headers = {"Retry-After": str(DATABASE_RETRY_AFTER)}
    return _answer(request, 503, body, headers, database=False)


def install(app: FastAPI) -> None:
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(BundleError, _bundle_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(TextRefused, _text_refused)
    app.add_exception_handler(HTTPException, _http_error)
    # Unreachable, too slow (lock or statement timeout), or no free connection in the pool.
    for database_error in (OperationalError, DisconnectionError, PoolTimeout):
        app.add_exception_handler(database_error, _database_error)
