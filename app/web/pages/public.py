"""Pages anyone may see without an account: competitions, leaderboards, their exports and charts."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from markupsafe import Markup
from sqlalchemy.orm import Session

from app.services.accounts.access import is_organizer
from app.services.boards.snapshot import BoardSnapshot
from app.services.competitions import catalog, participation
from app.services.errors import NotFound
from app.services.workers import queues
from app.storage.models import User
from app.storage.types import utcnow
from app.web import sessions
from app.web.deps import SessionDep
from app.web.pages import boards, further_boards, own_workers
from app.web.pages.render import SECURITY_HEADERS, PageRoute, Pages, get_pages, render
from app.web.schemas.competitions import CompetitionOut
from app.web.sessions import Viewer

router = APIRouter(route_class=PageRoute, include_in_schema=False)

#: An SVG opened on its own must not run anything either (matplotlib writes no script; belt and braces).
SVG_HEADERS = {**SECURITY_HEADERS, "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"}


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The cheapest answer the server gives (no database): for load balancers and the benchmark."""
    return {"status": "ok"}


@router.get("/")
def home(request: Request, session: SessionDep, viewer: Viewer) -> Response:
    listed = catalog.list_competitions(session)
    return render(request, "home.html", {"competitions": listed, "now": utcnow()}, viewer=viewer)


@router.get("/c/{competition}")
def competition_page(competition: str, request: Request, session: SessionDep, viewer: Viewer) -> Response:
    competition_row = catalog.get_competition(session, competition)
    state = get_pages(request).state
    view = CompetitionOut.of(session, competition_row, state.limits, utcnow())
    context = {
        "c": view,
        "now": utcnow(),
        "organizer": is_organizer(session, viewer, competition_row.id),
        "request_state": participation.own_request(session, viewer, competition_row),
        "unserved": queues.unserved(session, competition_row.id),
    }
    return render(request, "competition.html", context, viewer=viewer)


def _table_html(pages: Pages, snapshot: BoardSnapshot) -> Markup:
    """The ranked table as HTML: the same for every viewer of the snapshot's class."""
    view = boards.board_view(snapshot)
    html = pages.env.get_template("_board_table.html").render(view=view, ref=snapshot.facts.ref)
    return Markup(html)  # noqa: S704  (rendered by the autoescaping environment)


async def _snapshot(request: Request, ref: tuple[str, str, str]) -> tuple[BoardSnapshot, User | None]:
    """The snapshot the caller may see, and the caller. The common case (no login, nothing
    changed) needs neither the database nor a worker thread; anything else is looked up in a thread."""
    pages = get_pages(request)
    if sessions.USER_KEY not in request.session:
        snapshot = pages.state.boards.peek(ref, "public")
        if snapshot is not None:
            return snapshot, None
    viewer = await run_in_threadpool(sessions.get_viewer, request, pages.state)
    return await run_in_threadpool(pages.state.boards.for_viewer, ref, viewer), viewer


@router.get("/c/{competition}/{task}/{phase}")
async def leaderboard_page(competition: str, task: str, phase: str, request: Request) -> Response:
    """The phase's public leaderboard: the ranked table, the chart, the exports. The table is
    rendered once per snapshot; the rest of the page is small."""
    pages = get_pages(request)
    snapshot, viewer = await _snapshot(request, (competition, task, phase))
    table: Markup | None = None
    alt = ""
    if snapshot.entries:
        table = await _derived(snapshot, "table.html", lambda: _table_html(pages, snapshot))
        alt = await _derived(snapshot, "progress.alt", lambda: boards.progress_alt(snapshot))
    context: dict[str, Any] = {
        "snap": snapshot,
        "facts": snapshot.facts,
        "ref": snapshot.facts.ref,
        "table": table,
        "chart_alt": alt,
        "primary_label": boards.primary_title(snapshot),
        "now": utcnow(),
        **await own_workers.phase_page_notice(request, (competition, task, phase), viewer),
    }
    return render(request, "leaderboard.html", context, viewer=viewer)


async def _visible(request: Request, ref: tuple[str, str, str]) -> BoardSnapshot:
    snapshot, _ = await _snapshot(request, ref)
    if snapshot.hidden:
        raise NotFound("the results of this phase are hidden until its organizers reveal them")
    return snapshot


async def _derived(snapshot: BoardSnapshot, name: str, build: Callable[[], Any]) -> Any:
    """``snapshot.derived(name, build)``; when it must be made, it is made in a worker thread."""
    made = snapshot.peek(name)
    return made if made is not None else await run_in_threadpool(snapshot.derived, name, build)


def accepts_gzip(request: Request) -> bool:
    """Whether the client takes gzip (``Accept-Encoding``, with ``q=0`` meaning no)."""
    for part in request.headers.get("accept-encoding", "").split(","):
        coding, _, params = part.partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            q = params.strip().removeprefix("q=").strip() or "1"
            try:
                return float(q) > 0
            except ValueError:
                return False
    return False


async def _send(
    request: Request, snapshot: BoardSnapshot, name: str, data: bytes, media_type: str, headers: dict[str, str]
) -> Response:
    """The export, gzip-compressed once per snapshot for clients that take it (a 300-team board
    shrinks about tenfold; compressing it again for every request would cost more than serving it)."""
    headers = {**headers, "Vary": "Accept-Encoding"}
    if len(data) > GZIP_MIN_BYTES and accepts_gzip(request):
        raw = data
        data = await _derived(snapshot, f"{name}.gz", lambda: gzip.compress(raw, compresslevel=6, mtime=0))
        headers["Content-Encoding"] = "gzip"
    return Response(data, media_type=media_type, headers=headers)


_MEDIA = {"csv": "text/csv; charset=utf-8", "json": "application/json"}
#: The leaderboard also as a paper's table (``leaderboard.paper``): LaTeX (booktabs) and Markdown.
_BOARD_MEDIA = {**_MEDIA, "tex": "text/x-tex; charset=utf-8", "md": "text/markdown; charset=utf-8"}
GZIP_MIN_BYTES = 1024


def _attachment(name: str) -> dict[str, str]:
    return {**SECURITY_HEADERS, "Content-Disposition": f'attachment; filename="{name}"'}


@router.get("/c/{competition}/{task}/{phase}/leaderboard.{extension}")
async def leaderboard_export(competition: str, task: str, phase: str, extension: str, request: Request) -> Response:
    """The leaderboard as CSV or JSON (the same rows and numbers as the page, as fractions), or as a paper's
    table in LaTeX or Markdown (the numbers as the page shows them, intervals and tied groups marked)."""
    if extension not in _BOARD_MEDIA:
        raise NotFound(f"there is no leaderboard export as {extension!r}; try .csv, .json, .tex or .md")
    snapshot = await _visible(request, (competition, task, phase))
    name = f"leaderboard.{extension}"
    data = await _derived(snapshot, name, lambda: boards.board_export(snapshot, extension))
    # JSON is read by scripts as often as saved: it is shown inline, the CSV is a download.
    headers = (
        SECURITY_HEADERS if extension == "json" else _attachment(boards.export_name(snapshot, "leaderboard", extension))
    )
    return await _send(request, snapshot, name, data, _BOARD_MEDIA[extension], headers)


async def _further_board(request: Request, snapshot: BoardSnapshot, name: str) -> further_boards.FurtherBoard:
    """The snapshot's further board ``name``, ranked and with its intervals, made once per snapshot."""
    pages = get_pages(request)

    def session() -> Session:
        return pages.state.db.session(read_only=True)

    further_boards.further_board(snapshot, name)  # a board the phase does not have is not found at once
    board: further_boards.FurtherBoard = await _derived(
        snapshot, f"boards/{name}", lambda: further_boards.further_board(snapshot, name, session)
    )
    return board


@router.get("/c/{competition}/{task}/{phase}/boards/{name}.{extension}")
async def further_board_export(
    competition: str, task: str, phase: str, name: str, extension: str, request: Request
) -> Response:
    """One of the phase's further boards as CSV or JSON, or as a paper's table in LaTeX or Markdown
    (``app.web.pages.further_boards``)."""
    if extension not in _BOARD_MEDIA:
        raise NotFound(f"there is no board export as {extension!r}; try .csv, .json, .tex or .md")
    snapshot = await _visible(request, (competition, task, phase))
    board = await _further_board(request, snapshot, name)
    facts = snapshot.facts
    caption = f"{facts.competition_title}: {facts.task_title}, {facts.phase_title}, {board.spec.title}."

    def build() -> bytes:
        if extension in ("tex", "md"):
            return further_boards.paper(board, extension, caption)
        return further_boards.export(board, extension)

    data = await _derived(snapshot, f"boards/{name}.{extension}", build)
    headers = (
        SECURITY_HEADERS
        if extension == "json"
        else _attachment(boards.export_name(snapshot, f"board-{name}", extension))
    )
    return await _send(request, snapshot, f"boards/{name}.{extension}", data, _BOARD_MEDIA[extension], headers)


@router.get("/c/{competition}/{task}/{phase}/boards/{name}")
async def further_board_page(competition: str, task: str, phase: str, name: str, request: Request) -> Response:
    """One of the phase's further boards: its entries ranked its way, its metrics on its slice."""
    snapshot, viewer = await _snapshot(request, (competition, task, phase))
    if snapshot.hidden:
        raise NotFound("the results of this phase are hidden until its organizers reveal them")
    board = await _further_board(request, snapshot, name)
    context: dict[str, Any] = {"snap": snapshot, "facts": snapshot.facts, "ref": snapshot.facts.ref, "board": board}
    return render(request, "further_board.html", context, viewer=viewer)


@router.get("/c/{competition}/{task}/{phase}/documents.{extension}")
async def documents_export(competition: str, task: str, phase: str, extension: str, request: Request) -> Response:
    """Every entry's scores per document (per unit of the scorer) as CSV or JSON."""
    if extension not in _MEDIA:
        raise NotFound(f"there is no per-document export as {extension!r}; try .csv or .json")
    pages = get_pages(request)
    snapshot = await _visible(request, (competition, task, phase))

    def session() -> Session:
        return pages.state.db.session(read_only=True)

    name = f"documents.{extension}"
    data = await _derived(snapshot, name, lambda: boards.documents_export(snapshot, extension, session))
    headers = _attachment(boards.export_name(snapshot, "documents", extension))
    return await _send(request, snapshot, name, data, _MEDIA[extension], headers)


@router.get("/c/{competition}/{task}/{phase}/progress.svg")
async def progress_chart(competition: str, task: str, phase: str, request: Request) -> Response:
    """The best primary score over time per team, drawn by matplotlib on the server."""
    snapshot = await _visible(request, (competition, task, phase))
    svg = await _derived(snapshot, "progress.svg", lambda: boards.progress_svg(snapshot))
    return await _send(request, snapshot, "progress.svg", svg, "image/svg+xml", SVG_HEADERS)
