"""The OpenAPI document as the server behaves, where FastAPI's own generation says less or otherwise.

FastAPI marks every operation with a security dependency as needing it; but most reads (the
competitions, their files, the leaderboards) are open to anyone and only take a token when one is
sent. Those operations depend on ``deps.OptionalUser``, whose scheme has a name of its own; here
it becomes "no credentials, or the bearer token" (``security: [{}, {"HTTPBearer": []}]``), and the
one ``HTTPBearer`` scheme stays in the document.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from app.web.deps import BEARER_SCHEME, OPTIONAL_BEARER_SCHEME

_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def declare_optional_auth(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with each operation's security saying whether a token is needed or only taken."""
    schemes = document.get("components", {}).get("securitySchemes", {})
    optional = schemes.pop(OPTIONAL_BEARER_SCHEME, None)
    if optional is not None:
        schemes.setdefault(BEARER_SCHEME, optional)
    for item in document.get("paths", {}).values():
        for method in _METHODS:
            operation = item.get(method)
            if operation is None or "security" not in operation:
                continue
            names = {name for requirement in operation["security"] for name in requirement}
            if BEARER_SCHEME in names:
                operation["security"] = [{BEARER_SCHEME: []}]
            elif OPTIONAL_BEARER_SCHEME in names:
                operation["security"] = [{}, {BEARER_SCHEME: []}]
    return document


def install(app: FastAPI) -> None:
    """Serve ``app``'s document with the corrections above (made once, on the first request)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                openapi_version=app.openapi_version,
                summary=app.summary,
                description=app.description,
                routes=app.routes,
            )
            app.openapi_schema = declare_optional_auth(document)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
