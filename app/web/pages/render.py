"""Rendering pages: the Jinja2 environment (autoescape on), security headers, and error pages.

Every page goes through ``render``, which adds what the layout needs (the viewer, one-shot
messages, a CSRF token on demand) and the headers that keep a page from being framed or from
running any script but ours. ``PageRoute`` turns the services' refusals into HTML error pages (or
JSON for a script that asked for JSON), and a page that needs a login into a redirect to the form.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from fastapi import Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.routing import APIRoute
from markupsafe import Markup
from sqlalchemy.exc import DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session

from app.services.competitions.catalog import task_description
from app.services.competitions.markdown import render_markdown
from app.services.errors import InvalidInput, NotFound, ServiceError
from app.storage.models import User
from app.storage.models.base import TextRefused
from app.storage.types import utcnow
from app.web import csrf, sessions
from app.web.pages import urls
from app.web.schemas.common import wait_headers
from app.web.state import AppState
from leaderboard.exports import iso_utc
from leaderboard.tables import metric_column, percent
from scorers import ScorerDescription

WEB = Path(__file__).resolve().parent.parent
TEMPLATES = WEB / "templates"
STATIC = WEB / "static"

#: No inline script or style, nothing from other sites; images may be our SVG charts.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


@dataclass
class Pages:
    """What the pages hold for the app's lifetime."""

    state: AppState
    env: jinja2.Environment


def get_pages(request: Request) -> Pages:
    pages: Pages = request.app.state.pages
    return pages


def utc_text(moment: datetime | None) -> str:
    return "" if moment is None else moment.strftime("%Y-%m-%d %H:%M UTC")


def until_text(moment: datetime, now: datetime | None = None) -> str:
    """``"2 days 3 hours"``, ``"5 minutes"``: how long until ``moment`` (server-side countdown text)."""
    seconds = int((moment - (now or utcnow())).total_seconds())
    if seconds <= 0:
        return "now"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [(days, "day"), (hours, "hour"), (minutes, "minute")]
    shown = [f"{n} {word}{'' if n == 1 else 's'}" for n, word in parts if n][:2]
    return " ".join(shown) or "less than a minute"


def pct(value: object) -> str:
    """A stored fraction as a percentage with two decimals, ``–`` when there is none."""
    number = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    return percent(number)


def metric(value: object, description: ScorerDescription, name: str) -> str:
    """A stored metric as every table writes it (``leaderboard.tables.metric_text``: percent for a fraction,
    a program's column with its decimals), ``–`` when there is none."""
    number = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    return metric_column(description, name).format(number)


def metric_title(description: ScorerDescription, name: str) -> str:
    """A metric's heading: its column title (a scoring program's), else its name."""
    spec = description.metric(name)
    return spec.label if spec is not None else name


def markdown(text: str) -> Markup:
    """Organizer Markdown as HTML: safe to insert because ``render_markdown`` sanitises it."""
    return Markup(render_markdown(text))  # noqa: S704


@functools.cache
def make_environment() -> jinja2.Environment:
    """The pages' templates, one environment per process: it holds nothing of an app, and each app of its own
    compiled every template again at its first pages (about 20 ms of CPU a page; one app per test)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(iso=iso_utc, utc=utc_text, until=until_text, markdown=markdown, pct=pct, metric=metric)
    env.globals.update(urls=urls, described=task_description, metric_title=metric_title)
    return env


def render(
    request: Request,
    name: str,
    context: dict[str, Any],
    *,
    viewer: User | None,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    pages = get_pages(request)
    body = pages.env.get_template(name).render(
        request=request,
        viewer=viewer,
        flashes=sessions.take_flashes(request),
        csrf=lambda: csrf.csrf_token(request),
        path=request.url.path,
        **context,
    )
    return HTMLResponse(body, status_code=status, headers={**SECURITY_HEADERS, **(headers or {})})


def form_again(
    request: Request,
    session: Session,
    name: str,
    context: dict[str, Any],
    error: ServiceError,
    *,
    viewer: User | None,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    """A form the services refused: its page again with ``error`` in place, at the error's status. What
    the attempt wrote is rolled back first: the request's session commits when the handler returns."""
    session.rollback()
    return render(request, name, {**context, "error": error}, viewer=viewer, status=error.status, headers=headers)


def redirect(path: str) -> RedirectResponse:
    """After a form post: see the result with a GET (303), so reloading does not post again."""
    return RedirectResponse(path, status_code=303)


#: The words of a 404 page, and of a page address that names nothing.
NO_SUCH_PAGE = "There is no such page here. It may have been moved, or the address was mistyped."


def refused_text(exc: TextRefused) -> InvalidInput:
    """A text the database cannot hold, as the refusal of input it is (API and pages alike)."""
    return InvalidInput("the request was refused", [{"where": exc.where, "message": exc.message}])


def wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


@dataclass(frozen=True)
class ErrorPage:
    """What ``error.html`` shows: a status, a message, and the problems of refused input."""

    status: int
    message: str
    problems: list[dict[str, str]] = field(default_factory=list)
    total: int = 0


def error_page(
    request: Request,
    error: ErrorPage | ServiceError,
    *,
    headers: dict[str, str] | None = None,
    with_viewer: bool = True,
) -> HTMLResponse:
    """The error page of ``error``; the layout names the logged-in viewer unless ``with_viewer`` is false
    (the database is down: looking the viewer up would fail too)."""
    viewer = None
    if with_viewer:
        state: AppState = request.app.state.podium
        try:
            viewer = sessions.get_viewer(request, state)
        except (OperationalError, DisconnectionError, PoolTimeout):
            viewer = None  # the page still says what went wrong
    return render(request, "error.html", {"error": error}, viewer=viewer, status=error.status, headers=headers)


def error_response(request: Request, exc: ServiceError, viewer: User | None) -> Response:
    headers = wait_headers(exc)
    if wants_json(request):
        return JSONResponse(exc.to_dict(), status_code=exc.status, headers=headers)
    return render(request, "error.html", {"error": exc}, viewer=viewer, status=exc.status, headers=headers)


def form_refused(request: Request, exc: RequestValidationError) -> ServiceError:
    """A form (or address) the page's parameters refused, as a refusal naming each field; an address
    one navigates to whose path names nothing (``/submissions/abc``) is a page that does not exist."""
    navigated = request.method in ("GET", "HEAD")
    if navigated and exc.errors() and all(tuple(error.get("loc", ()))[:1] == ("path",) for error in exc.errors()):
        return NotFound(NO_SUCH_PAGE)
    problems = [
        {"where": str(error.get("loc", ("",))[-1]), "message": str(error.get("msg", ""))} for error in exc.errors()
    ]
    return InvalidInput("the form was refused", problems)


class PageRoute(APIRoute):
    """A route whose refusals are pages: a login redirect, or an error page with the message."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def page_handler(request: Request) -> Response:
            try:
                try:
                    return await handle(request)
                except TextRefused as exc:
                    raise refused_text(exc) from None
                except RequestValidationError as exc:
                    raise form_refused(request, exc) from None
            except ServiceError as exc:
                login_page = request.method in ("GET", "HEAD") and not wants_json(request)
                if isinstance(exc, sessions.LoginRequired) and login_page:
                    query = f"?{request.url.query}" if request.url.query else ""
                    return redirect(urls.login(request.url.path + query))
                state: AppState = request.app.state.podium
                viewer = await run_in_threadpool(sessions.get_viewer, request, state)
                return error_response(request, exc, viewer)

        return page_handler
