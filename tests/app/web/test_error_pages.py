"""Errors on the pages are HTML pages of the site (a dead link, a wrong method, a path that names
nothing, the database down); the same errors on the API, or for a script that asks for JSON, keep
the JSON body."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from app.storage.db import Database
from tests.app.web.test_ops import unreachable
from tests.app.web.test_pages import login, setup

__all__ = ["unreachable"]


def heading(page: Response) -> str:
    found = re.search(r"<h1>(.*?)</h1>", page.text, re.DOTALL)
    assert found, page.text[:300]
    return found.group(1).strip()


def assert_error_page(page: Response, status: int, title: str) -> None:
    assert page.status_code == status
    assert page.headers["content-type"].startswith("text/html")
    assert page.text.startswith("<!doctype html>")
    assert heading(page) == title
    assert page.headers["Content-Security-Policy"].startswith("default-src 'self'")


@pytest.mark.parametrize(
    "path", ["/no-such-page", "/c/nothing-here", "/c/comp/labels/none", "/submissions/999999", "/submissions/abc"]
)
def test_a_page_that_does_not_exist_is_an_html_404(db: Database, client: TestClient, path: str) -> None:
    setup(db)
    page = client.get(path)
    assert_error_page(page, 404, "Not found")
    assert '<a href="/">Back to the competitions</a>' in page.text


def test_the_error_page_names_the_logged_in_viewer(db: Database, client: TestClient) -> None:
    setup(db, "ada")
    assert login(client, "ada").status_code == 303
    page = client.get("/no-such-page")
    assert_error_page(page, 404, "Not found")
    assert "ada" in page.text


def test_a_method_a_page_does_not_take_is_an_html_405_naming_every_allowed_method(client: TestClient) -> None:
    page = client.delete("/login")  # GET shows the form, POST sends it: two routes share the path
    assert_error_page(page, 405, "Not this way")
    assert page.headers["Allow"] == "GET, POST"


def test_the_api_keeps_json_errors(client: TestClient) -> None:
    missing = client.get("/api/v1/no-such-thing")
    assert (missing.status_code, missing.json()["error"]) == (404, "not_found")
    competition = client.get("/api/v1/competitions/nothing-here")
    assert (competition.status_code, competition.json()["error"]) == (404, "not_found")
    wrong = client.put("/api/v1/tokens")
    assert (wrong.status_code, wrong.json()["error"], wrong.headers["Allow"]) == (405, "method_not_allowed", "POST")


def test_a_script_that_asks_for_json_gets_json_on_a_page_path(client: TestClient) -> None:
    answer = client.get("/no-such-page", headers={"Accept": "application/json"})
    assert (answer.status_code, answer.json()["error"]) == (404, "not_found")


def test_pages_answer_an_html_503_while_the_database_is_down(unreachable: TestClient) -> None:
    for path in ("/", "/c/comp", "/submissions/1"):
        page = unreachable.get(path)
        assert_error_page(page, 503, "Unavailable")
        assert page.headers["Retry-After"] == "5"
        assert "The database cannot be reached right now" in page.text
    api = unreachable.get("/api/v1/competitions")
    assert (api.status_code, api.json()["error"]) == (503, "database_unavailable")
