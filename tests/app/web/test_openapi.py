"""The OpenAPI document says what the server does: which operations need a token and which only take
one, the limits of names, passwords and team names, the login throttle's 429; and the server does
what it says: a malformed ``Authorization`` header is refused like a wrong token, a 405 names every
method of its path."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.services.accounts import teams, users
from app.storage.db import Database
from tests.app.builders import PASSWORD
from tests.app.web.test_api import PHASE, auth, setup

BOARD = "/api/v1/competitions/{competition}/tasks/{task}/phases/{phase}/leaderboard"
ANYONE = [{}, {"HTTPBearer": []}]
TOKEN = [{"HTTPBearer": []}]


def document(client: TestClient) -> dict[str, Any]:
    answer = client.get("/openapi.json")
    assert answer.status_code == 200
    return dict(answer.json())


def schema(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(doc["components"]["schemas"][name])


def test_public_operations_take_a_token_and_private_ones_need_one(client: TestClient) -> None:
    paths = document(client)["paths"]
    public = [
        ("get", "/api/v1/competitions"),
        ("get", "/api/v1/competitions/{competition}"),
        ("get", "/api/v1/competitions/{competition}/tasks/{task}/phases/{phase}"),
        ("get", "/api/v1/competitions/{competition}/tasks/{task}/files/{name}"),
        ("get", BOARD),
        ("get", "/api/v1/baselines"),
        ("post", "/api/v1/users"),
        ("post", "/api/v1/tokens"),
        ("get", "/api/v1/health"),
    ]
    for method, path in public:
        assert paths[path][method]["security"] == ANYONE, (method, path)
    private = [
        ("get", "/api/v1/me"),
        ("post", "/api/v1/competitions"),
        ("post", "/api/v1/competitions/{competition}/tasks/{task}/phases/{phase}/submissions"),
        ("get", "/api/v1/submissions/{submission_id}"),
        ("get", "/api/v1/competitions/{competition}/participants"),
        ("post", "/api/v1/competitions/{competition}/teams"),
    ]
    for method, path in private:
        assert paths[path][method]["security"] == TOKEN, (method, path)
    every = {scheme for item in paths.values() for op in item.values() for req in op["security"] for scheme in req}
    assert every == {"HTTPBearer"}


def test_the_document_states_the_limits_of_names_passwords_and_team_names(client: TestClient) -> None:
    doc = document(client)
    user = schema(doc, "UserCreate")["properties"]
    assert (user["name"]["minLength"], user["name"]["maxLength"]) == (1, 64)
    assert user["name"]["pattern"] == f"^{users.NAME_PATTERN.pattern}$"
    assert (user["password"]["minLength"], user["password"]["maxLength"]) == (8, users.MAX_PASSWORD_LENGTH)
    assert user["email"]["anyOf"][0]["maxLength"] == 254
    team = schema(doc, "TeamCreate")["properties"]["name"]
    assert (team["minLength"], team["maxLength"]) == (1, teams.MAX_TEAM_NAME)
    token = schema(doc, "TokenCreate")["properties"]
    assert (token["name"]["maxLength"], token["label"]["maxLength"]) == (64, 100)


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"name": "-ada", "password": PASSWORD}, "body.name"),
        ({"name": "a" * 65, "password": PASSWORD}, "body.name"),
        ({"name": "ada", "password": "short"}, "body.password"),
        ({"name": "ada", "password": PASSWORD, "email": "a" * 255}, "body.email"),
    ],
)
def test_what_breaks_the_declared_limits_is_refused_with_422(client: TestClient, body: Any, where: str) -> None:
    answer = client.post("/api/v1/users", json=body)
    assert answer.status_code == 422
    assert [problem["where"] for problem in answer.json()["problems"]] == [where]


def test_a_team_name_over_its_limit_is_refused_with_422(db: Database, client: TestClient) -> None:
    setup(db)
    answer = client.post("/api/v1/competitions/comp/teams", json={"name": "x" * 101}, headers=auth(db, "ada"))
    assert (answer.status_code, answer.json()["problems"][0]["where"]) == (422, "body.name")


def test_the_login_throttles_429_is_declared_and_carries_retry_after(client: TestClient) -> None:
    declared = document(client)["paths"]["/api/v1/tokens"]["post"]["responses"]["429"]
    assert declared["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorOut"}
    assert declared["headers"]["Retry-After"]["required"] is True
    assert client.post("/api/v1/users", json={"name": "ada", "password": PASSWORD}).status_code == 201
    for attempt in range(6):
        answer = client.post("/api/v1/tokens", json={"name": "ada", "password": f"guess {attempt}"})
    assert answer.status_code == 429
    assert int(answer.headers["Retry-After"]) == answer.json()["retry_after"] > 0


@pytest.mark.parametrize(
    "header", ["Basic YWRhOnNlY3JldA==", "Bearer", "Bearer ", "bearer  ", "Token abc", "garbage", ""]
)
@pytest.mark.parametrize("path", ["/api/v1/competitions", f"{PHASE}/leaderboard", "/api/v1/me", "/api/v1/health"])
def test_a_malformed_authorization_header_is_refused_like_a_wrong_token(
    db: Database, client: TestClient, header: str, path: str
) -> None:
    setup(db)
    assert client.get(path).status_code == (401 if path == "/api/v1/me" else 200)  # anonymous: no header
    answer = client.get(path, headers={"Authorization": header})
    assert (answer.status_code, answer.json()["error"]) == (401, "not_authenticated")
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    wrong = client.get(path, headers={"Authorization": "Bearer not-a-token"})
    assert (wrong.status_code, wrong.json()["error"]) == (401, "not_authenticated")


def test_a_405_names_every_method_of_the_path(db: Database, client: TestClient) -> None:
    setup(db)
    paths = document(client)["paths"]
    for path in ("/api/v1/competitions", f"{PHASE}/submissions", f"{PHASE}/baseline-runs"):
        template = path.replace("comp/tasks/labels/phases/dev", "{competition}/tasks/{task}/phases/{phase}")
        answer = client.request("PATCH", path, headers=auth(db, "ada"))
        assert answer.status_code == 405
        assert answer.json()["error"] == "method_not_allowed"
        # The order of Allow's methods means nothing (RFC 9110); which they are does.
        assert sorted(answer.headers["Allow"].split(", ")) == sorted(method.upper() for method in paths[template]), path
