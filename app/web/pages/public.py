"""Pages anyone may see without an account: competitions, leaderboards, their exports and charts."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from markupsafe import Markup

from app.services import competitions
from app.services.board_cache import BoardSnapshot
from app.services.errors import NotFound
from app.storage.types import utcnow
from app.web.api.views import competition_view
from app.web.deps import SessionDep
from app.web.pages import boards
from app.web.pages.render import SECURITY_HEADERS, PageRoute, Pages, get_pages, render
from app.web.sessions import Viewer

router = APIRouter(route_class=PageRoute, include_in_schema=False)

#: An SVG opened on its own must not run anything either (matplotlib writes no script; belt and braces).
SVG_HEADERS = {**SECURITY_HEADERS, "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"}


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The cheapest answer the server gives (no database): for load balancers and the benchmark."""
    return {"status": "ok"}


@router.get("/")
def home(request: Request, session: SessionDep, viewer: Viewer) -> Response:
    found = competitions.list_competitions(session)
    return render(request, "home.html", {"competitions": found, "now": utcnow()}, viewer=viewer)


@router.get("/c/{competition}")
def competition_page(competition: str, request: Request, session: SessionDep, viewer: Viewer) -> Response:
    found = competitions.get_competition(session, competition)
    state = get_pages(request).state
    view = competition_view(session, found, state.limits, utcnow())
    return render(request, "competition.html", {"c": view, "now": utcnow()}, viewer=viewer)


def _table_html(pages: Pages, snapshot: BoardSnapshot) -> Markup:
    """The table, rendered once per snapshot (it is the same for every viewer of its class)."""

    def build() -> Markup:
        view = boards.board_view(snapshot)
        html = pages.env.get_template("_board_table.html").render(view=view, ref=snapshot.facts.ref)
        return Markup(html)  # noqa: S704  (rendered by the autoescaping environment)

    table: Markup = snapshot.derived("table.html", build)
    return table


@router.get("/c/{competition}/{task}/{phase}")
def leaderboard_page(competition: str, task: str, phase: str, request: Request, viewer: Viewer) -> Response:
    """The phase's public leaderboard: the ranked table, the chart, the exports."""
    pages = get_pages(request)
    snapshot = pages.boards.for_viewer((competition, task, phase), viewer)
    context: dict[str, Any] = {
        "snap": snapshot,
        "facts": snapshot.facts,
        "ref": snapshot.facts.ref,
        "table": _table_html(pages, snapshot) if snapshot.entries else None,
        "chart_alt": boards.progress_alt(snapshot) if snapshot.entries else "",
        "now": utcnow(),
    }
    return render(request, "leaderboard.html", context, viewer=viewer)


def _visible(pages: Pages, ref: tuple[str, str, str], viewer: Any) -> BoardSnapshot:
    snapshot = pages.boards.for_viewer(ref, viewer)
    if snapshot.hidden:
        raise NotFound("the results of this phase are hidden until its organizers reveal them")
    return snapshot


def _download(data: bytes, media_type: str, name: str) -> Response:
    headers = {**SECURITY_HEADERS, "Content-Disposition": f'attachment; filename="{name}"'}
    return Response(data, media_type=media_type, headers=headers)


_MEDIA = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


@router.get("/c/{competition}/{task}/{phase}/leaderboard.{extension}")
def leaderboard_export(
    competition: str, task: str, phase: str, extension: str, request: Request, viewer: Viewer
) -> Response:
    """The leaderboard as CSV or JSON: the same rows and numbers as the page, as fractions."""
    if extension not in _MEDIA:
        raise NotFound(f"there is no leaderboard export as {extension!r}; try .csv or .json")
    snapshot = _visible(get_pages(request), (competition, task, phase), viewer)
    data = boards.board_export(snapshot, extension)
    if extension == "json":  # read by scripts as often as saved: shown inline, not as a download
        return Response(data, media_type=_MEDIA["json"], headers=SECURITY_HEADERS)
    return _download(data, _MEDIA[extension], boards.export_name(snapshot, "leaderboard", extension))


@router.get("/c/{competition}/{task}/{phase}/documents.{extension}")
def documents_export(
    competition: str, task: str, phase: str, extension: str, request: Request, viewer: Viewer
) -> Response:
    """Every entry's scores per document (per unit of the scorer) as CSV or JSON."""
    if extension not in _MEDIA:
        raise NotFound(f"there is no per-document export as {extension!r}; try .csv or .json")
    pages = get_pages(request)
    snapshot = _visible(pages, (competition, task, phase), viewer)

    def session() -> Any:
        return pages.state.db.session(read_only=True)

    data = boards.documents_export(snapshot, extension, session)
    return _download(data, _MEDIA[extension], boards.export_name(snapshot, "documents", extension))


@router.get("/c/{competition}/{task}/{phase}/progress.svg")
def progress_chart(competition: str, task: str, phase: str, request: Request, viewer: Viewer) -> Response:
    """The best primary score over time per team, drawn by matplotlib on the server."""
    snapshot = _visible(get_pages(request), (competition, task, phase), viewer)
    return Response(boards.progress_svg(snapshot), media_type="image/svg+xml", headers=SVG_HEADERS)
