"""The one place where errors become HTTP answers: always JSON, ``{"error": code, "detail": ...}``,
plus ``problems`` (each naming its place) for refused input."""

from __future__ import annotations

import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException

from app.services.accounts.throttle import LoginThrottled
from app.services.bundles.spec import BundleError
from app.services.errors import InvalidInput, NotAuthenticated, QuotaExhausted, ServiceError, UploadTooLarge
from app.storage.models.base import TextRefused
from app.storage.types import utcnow

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


def _service_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ServiceError)
    headers = {}
    if isinstance(exc, NotAuthenticated):
        headers["WWW-Authenticate"] = "Bearer"
    if isinstance(exc, LoginThrottled):
        headers["Retry-After"] = str(exc.retry_after)
    if isinstance(exc, QuotaExhausted) and exc.resets_at is not None:
        headers["Retry-After"] = str(max(1, math.ceil((exc.resets_at - utcnow()).total_seconds())))
    if isinstance(exc, UploadTooLarge):
        # The rest of the body was not read: closing the connection stops the client from sending it,
        # where keeping it alive would make the server read and discard the whole of it first.
        headers["Connection"] = "close"
    return JSONResponse(exc.to_dict(), status_code=exc.status, headers=headers)


def _bundle_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, BundleError)
    body: dict[str, Any] = {
        "error": "invalid_bundle",
        "detail": exc.summary(),
        "problems": [{"key": key, "message": message} for key, message in exc.problems],
        "total": len(exc.problems),
    }
    return JSONResponse(body, status_code=422)


def refused_text(exc: TextRefused) -> InvalidInput:
    """A text the database cannot hold, as the refusal of input it is."""
    return InvalidInput("the request was refused", [{"where": exc.where, "message": exc.message}])


def _text_refused(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, TextRefused)
    return _service_error(request, refused_text(exc))


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = [
        {"where": ".".join(str(part) for part in error.get("loc", ())), "message": str(error.get("msg", ""))}
        for error in exc.errors()
    ]
    body = {"error": "invalid_request", "detail": "the request was refused", "problems": problems}
    return JSONResponse(body, status_code=422)


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, "error")
    return JSONResponse(
        {"error": code, "detail": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers or None
    )


#: Seconds a client is asked to wait when the database cannot be reached.
DATABASE_RETRY_AFTER = 5


def _database_error(request: Request, exc: Exception) -> JSONResponse:
    # The request's transaction was rolled back (``deps.get_session``): nothing of it remains.
    log.warning("%s %s: the database is unavailable: %s", request.method, request.url.path, exc)
    body = {
        "error": "database_unavailable",
        "detail": "The database cannot be reached right now, so nothing was changed; please try again shortly.",
    }
    return JSONResponse(body, status_code=503, headers={"Retry-After": str(DATABASE_RETRY_AFTER)})


def install(app: FastAPI) -> None:
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(BundleError, _bundle_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(TextRefused, _text_refused)
    app.add_exception_handler(HTTPException, _http_error)
    # Unreachable, too slow (lock or statement timeout), or no free connection in the pool.
    for database_error in (OperationalError, DisconnectionError, PoolTimeout):
        app.add_exception_handler(database_error, _database_error)
