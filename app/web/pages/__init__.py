"""The server-rendered pages (Jinja2): competitions, leaderboards, taking part, organizing.

They work without JavaScript; ``static/podium.js`` only adds local times, countdowns, an upload
progress bar and live status. ``install`` adds them, the session cookie and the static files to an app.
"""

from __future__ import annotations

from fastapi import Depends, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from app.web import routing, sessions
from app.web.deps import refuse_nul_in_page_address
from app.web.pages import accounts, create, deletion, organize, participate, public, queues, removal
from app.web.pages.render import STATIC, Pages, make_environment
from app.web.state import AppState


def install(app: FastAPI, state: AppState) -> Pages:
    """Serve the pages from ``app``; returns what they hold."""
    pages = Pages(state=state, env=make_environment())
    app.state.pages = pages
    sessions.install(app, state.settings)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # Browsers ask for /favicon.ico whatever the page links; they all take the SVG the pages link.
    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(
            STATIC / "favicon.svg", media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"}
        )

    for module in (queues, public, accounts, participate, deletion, removal, organize, create):
        routing.include(app, module.router, dependencies=[Depends(refuse_nul_in_page_address)])
    return pages
