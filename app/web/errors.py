"""The one place where errors become HTTP answers: always JSON, ``{"error": code, "detail": ...}``,
plus ``problems`` (each naming its place) for refused input."""

from __future__ import annotations

import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from app.services.bundles import BundleError
from app.services.errors import NotAuthenticated, QuotaExhausted, ServiceError
from app.storage.types import utcnow

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
    if isinstance(exc, QuotaExhausted) and exc.resets_at is not None:
        headers["Retry-After"] = str(max(1, math.ceil((exc.resets_at - utcnow()).total_seconds())))
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


def install(app: FastAPI) -> None:
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(BundleError, _bundle_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
