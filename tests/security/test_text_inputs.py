"""Every text a client sends is checked before it reaches the database: a NUL character, or more
characters than where it is stored, is refused with a 4xx that names the field; never a 500 (what
PostgreSQL answered) and never stored as sent (what SQLite did).

The test walks what the app declares, so a new field or form cannot be forgotten: every string field
of every JSON request body in the OpenAPI document, every form field of every page that takes a
form, and every page address with a parameter. It runs as a site admin, so that no permission check
stands in front of the one under test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from annotated_types import MaxLen
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.services.accounts import users
from app.storage.db import Database
from app.storage.models import Base, Team, User
from app.web.pages.render import PageRoute
from app.web.schemas.common import NO_NUL
from tests.app.builders import HALF, as_bytes, make_competition, make_user
from tests.app.web.test_pages import login, token

#: What a path parameter is filled with, so that each address names something that exists.
PATH_VALUES = {"competition": "comp", "task": "labels", "phase": "dev", "name": "root"}
#: More than any column holds, for a field that declares no limit of its own.
UNBOUNDED = 1_000_001


@pytest.fixture
def admin(db: Database, client: TestClient, labels: object) -> Iterator[dict[str, str]]:
    """The site admin ``root`` logged in on ``client``, the competition ``comp``; root's API headers."""
    with db.session() as session:
        root = make_user(session, "root", admin=True)
        make_user(session, "ada")
        make_competition(session, organizers=("root",))
        issued = users.issue_token(session, root)
        session.commit()
    assert login(client, "root").status_code == 303
    yield {"Authorization": f"Bearer {issued}"}


def fill(path: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: PATH_VALUES.get(m.group(1), "1"), path)


def rows(db: Database) -> int:
    with db.session(read_only=True) as session:
        return sum(
            session.scalar(select(func.count()).select_from(table)) or 0 for table in Base.metadata.sorted_tables
        )


def named(answer: Any, field: str) -> bool:
    """Whether a refusal names ``field`` (in a JSON problem's ``where``, or on an HTML error page)."""
    if answer.headers.get("content-type", "").startswith("application/json"):
        return any(str(p.get("where", "")).split(".")[-1] == field for p in answer.json().get("problems") or [])
    return f"<code>{field}</code>" in answer.text


def assert_refused(answer: Any, field: str) -> None:
    assert 400 <= answer.status_code < 500, (answer.status_code, answer.text[:500])
    assert named(answer, field), answer.text[:500]


# -- the JSON API ------------------------------------------------------------------------------------------


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _string_branch(schema: dict[str, Any]) -> dict[str, Any] | None:
    for option in [schema, *schema.get("anyOf", [])]:
        if option.get("type") == "string":
            return option
    return None


def json_string_fields(spec: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any], dict[str, Any]]]:
    """(method, path, field, its string schema, the body's schema) for every string field of every JSON body."""
    found = []
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is None:
                continue
            schema = _resolve(spec, body["schema"])
            for field, prop in schema.get("properties", {}).items():
                string = _string_branch(_resolve(spec, prop))
                if string is not None:
                    found.append((method, path, field, string, schema))
    return found


def valid_body(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for field in schema.get("required", []):
        prop = _resolve(spec, schema["properties"][field])
        body[field] = "valid-text" if _string_branch(prop) is not None else {}
    return body


def test_every_string_field_of_the_api_declares_its_limits(client: TestClient) -> None:
    fields = json_string_fields(client.app.openapi())  # type: ignore[attr-defined]
    assert len(fields) >= 10  # users, tokens, teams, passwords, baseline runs...
    # NO_NUL, or a stricter pattern that refuses NUL too (a new user's name).
    undeclared = [
        (m, p, f)
        for m, p, f, s, _ in fields
        if "maxLength" not in s or "pattern" not in s or re.search(s["pattern"], "a\x00b") is not None
    ]
    assert undeclared == []


def test_every_string_field_of_the_api_refuses_nul_and_overlong_text(
    db: Database, client: TestClient, admin: dict[str, str]
) -> None:
    spec = client.app.openapi()  # type: ignore[attr-defined]
    before = rows(db)
    for method, path, field, string, schema in json_string_fields(spec):
        for value in ("a\x00b", "x" * (string.get("maxLength", UNBOUNDED - 1) + 1)):
            body = {**valid_body(spec, schema), field: value}
            answer = client.request(method.upper(), fill(path), headers=admin, json=body)
            assert_refused(answer, field)
    assert rows(db) == before  # nothing was stored


def test_the_reported_holes_are_closed(db: Database, client: TestClient, admin: dict[str, str]) -> None:
    email = client.post("/api/v1/users", json={"name": "eve", "password": "long enough", "email": "e" * 290 + "@x.org"})
    assert_refused(email, "email")
    for name in ("ev\x00e", "e" * 65):
        assert_refused(client.post("/api/v1/users", json={"name": name, "password": "long enough"}), "name")
    with db.session(read_only=True) as session:
        assert session.scalar(select(func.count()).select_from(User)) == 2  # root and ada


def test_an_upload_refuses_nul_in_its_method(client: TestClient, admin: dict[str, str]) -> None:
    url = "/api/v1/competitions/comp/tasks/labels/phases/dev/submissions"
    for field in ("method_name", "method_description"):
        files = {"file": ("run.json", as_bytes(HALF), "application/json")}
        assert_refused(client.post(url, headers=admin, data={field: "m\x00"}, files=files), field)


# -- the pages ----------------------------------------------------------------------------------------------


def page_routes(client: TestClient) -> list[tuple[str, set[str], Any]]:
    """(path, methods, route) of every page route."""
    found = []
    for context in iter_route_contexts(client.app.routes):  # type: ignore[attr-defined]
        if isinstance(getattr(context, "original_route", context), PageRoute):
            found.append((context.path, set(context.methods), context))
    return found


def page_forms(client: TestClient) -> list[tuple[str, str, int | None, str | None]]:
    """(path, field, its length limit, its pattern) for every text field of every page form."""
    found = []
    for path, methods, route in page_routes(client):
        if "POST" not in methods:
            continue
        for param in route.dependant.body_params:
            if param.field_info.annotation is not str:
                continue
            limits = [m.max_length for m in param.field_info.metadata if isinstance(m, MaxLen)]
            patterns = [getattr(m, "pattern", None) for m in param.field_info.metadata if hasattr(m, "pattern")]
            found.append((path, param.alias, limits[0] if limits else None, patterns[0] if patterns else None))
    return found


def test_every_page_form_field_declares_its_limits(client: TestClient) -> None:
    fields = page_forms(client)
    assert {"/login", "/register", "/c/{competition}/team/create", "/account/password"} <= {f[0] for f in fields}
    assert [(path, field) for path, field, limit, pattern in fields if limit is None or pattern != NO_NUL] == []


def test_every_page_form_refuses_nul_and_overlong_text(db: Database, client: TestClient, admin: dict[str, str]) -> None:
    before = rows(db)
    for path, field, limit, _ in page_forms(client):
        assert limit is not None
        for value in ("a\x00b", "x" * (limit + 1)):
            csrf = token(client.get("/account"))
            answer = client.post(fill(path), data={"csrf_token": csrf, field: value}, follow_redirects=False)
            assert_refused(answer, field)
            assert answer.headers["content-type"].startswith("text/html")  # a page, for a person
    assert rows(db) == before


def test_a_team_name_from_the_page_is_checked_too(db: Database, client: TestClient, admin: dict[str, str]) -> None:
    csrf = token(client.get("/c/comp/team"))
    answer = client.post("/c/comp/team/create", data={"csrf_token": csrf, "name": "Team\x00"})
    assert_refused(answer, "name")
    with db.session(read_only=True) as session:
        assert session.scalar(select(func.count()).select_from(Team)) == 0


def test_a_nul_in_any_page_address_is_not_found(client: TestClient, admin: dict[str, str]) -> None:
    routes = [(path, methods) for path, methods, _ in page_routes(client) if "{" in path]
    assert "/c/{competition}" in {path for path, _ in routes}
    for path, methods in routes:
        for name in re.findall(r"\{(\w+)\}", path):
            address = fill(path.replace("{" + name + "}", "%00"))
            for method in sorted(methods - {"HEAD"}):
                answer = client.request(method, address, data={"csrf_token": "x"}, follow_redirects=False)
                assert answer.status_code in (400, 403, 404, 422), (method, address, answer.status_code)
    assert client.get("/c/%00").status_code == 404
    assert client.get("/c/comp?next=%00").status_code == 422  # any query parameter, known or not
    assert client.get("/login?next=%00").status_code == 422
