"""The API's documentation works offline: ``/docs`` (Swagger UI) loads its script and style from the
server itself (the ``fastapi-offline`` package), never from a CDN. A real browser (Debian's chromium)
loads it with every request to another host refused, and sees the operations."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
from sqlalchemy.orm import Session

from tests.app.web.browser import BROWSER_TEST, live_server, open_browser

pytestmark = BROWSER_TEST

LOCAL = {"127.0.0.1", "localhost"}


def nothing(session: Session) -> None:
    """The documentation needs no rows."""


def test_the_api_documentation_renders_with_the_network_blocked(tmp_path: Path) -> None:
    from playwright.sync_api import Route, expect

    refused: list[str] = []
    asked: list[str] = []

    def only_this_machine(route: Route) -> None:
        url = route.request.url
        asked.append(url)
        if urlsplit(url).hostname in LOCAL:
            route.continue_()
        else:
            refused.append(url)
            route.abort("internetdisconnected")

    with live_server(tmp_path, nothing) as server, open_browser() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.route("**/*", only_this_machine)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{server}/docs")
        operations = page.locator(".opblock-summary-path")
        expect(operations.first).to_be_visible(timeout=30_000)
        assert operations.count() >= 25  # every operation of the API is listed
        board = "/api/v1/competitions/{competition}/tasks/{task}/phases/{phase}/leaderboard"
        expect(operations.filter(has_text=board).first).to_be_visible()
        assert not errors, errors
        assert httpx.get(f"{server}/redoc").status_code == 404  # ReDoc's page would load its logo from a CDN
    assert refused == [], f"the page asked other hosts for {refused}"
    assert any(url.endswith("/openapi.json") for url in asked)
    assert any(url.endswith("/static-offline-docs/swagger-ui-bundle.js") for url in asked)
