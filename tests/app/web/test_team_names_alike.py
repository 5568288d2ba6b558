"""A team name that looks like another team's (a Cyrillic ``і`` for a Latin ``i``, ``1`` for ``l``) is refused
on every path that names a team: founding and renaming through the API and the team page, and the team of
one a first upload creates (named after its user, whose name may look like a team's)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.services.accounts.teams import team_of
from app.services.accounts.users import find_user
from app.services.competitions.catalog import get_competition
from app.storage.db import Database
from tests.app.builders import HALF, make_user
from tests.app.web.test_api import auth, setup, upload, wait
from tests.app.web.test_pages import login, text, token

TEAMS = "/api/v1/competitions/comp/teams"
TEAM = "/api/v1/competitions/comp/team"
#: Names that look like ``victim``: a Cyrillic і (U+0456), Cyrillic і and с, a zero-width space, fullwidth
#: capitals, and (as names are compared whatever their case) capitals.
LOOKALIKES = ["vіctim", "vісtіm", "vic\u200btim", "ＶＩＣＴＩＭ", "VICTIM"]


def too_similar(name: str) -> str:
    similar = f"the team name {name!r} is too similar to the name of the team 'victim' in 'comp'"
    return f"{similar} (names that look alike are one name)"


@pytest.mark.parametrize("name", LOOKALIKES)
def test_the_api_refuses_to_found_or_rename_a_team_named_like_another(
    db: Database, client: TestClient, name: str
) -> None:
    setup(db)
    ada, bob = auth(db, "ada"), auth(db, "bob")
    assert client.post(TEAMS, headers=ada, json={"name": "victim"}).status_code == 201
    founded = client.post(TEAMS, headers=bob, json={"name": name})
    if name.casefold() == "victim":
        assert founded.json()["detail"] == f"the team name {name!r} is taken in 'comp'"
    else:
        assert founded.json()["detail"] == too_similar(name)
    assert (founded.status_code, founded.json()["error"]) == (409, "name_taken")
    assert client.post(TEAMS, headers=bob, json={"name": "Bobcats"}).status_code == 201
    renamed = client.patch(TEAM, headers=bob, json={"name": name})
    assert (renamed.status_code, renamed.json()["error"]) == (409, "name_taken")
    assert client.get(TEAM, headers=bob).json()["name"] == "Bobcats"
    assert client.patch(TEAM, headers=ada, json={"name": "VICTIM"}).status_code == 200  # its own name, recased


def test_a_name_of_invisible_characters_only_is_refused(db: Database, client: TestClient) -> None:
    setup(db)
    refused = client.post(TEAMS, headers=auth(db, "ada"), json={"name": "\u200b\u200c"})
    assert refused.status_code == 422
    assert refused.json()["problems"] == [{"where": "name", "message": "has no visible letters, digits or signs"}]


def test_the_team_page_refuses_to_found_or_rename_a_team_named_like_another(db: Database, client: TestClient) -> None:
    setup(db)
    assert client.post(TEAMS, headers=auth(db, "ada"), json={"name": "victim"}).status_code == 201
    login(client, "bob")
    founded = client.post(
        "/c/comp/team/create", data={"csrf_token": token(client.get("/c/comp/team")), "name": "vіctim"}
    )
    assert too_similar("vіctim").replace("'", "&#39;") in founded.text
    founded = client.post("/c/comp/team/create", data={"csrf_token": token(founded), "name": "Bobcats"})
    assert "You founded the team Bobcats." in text(founded)
    renamed = client.post("/c/comp/team/rename", data={"csrf_token": token(founded), "name": "vісtіm"})
    assert too_similar("vісtіm").replace("'", "&#39;") in renamed.text
    assert "Your team is now called" not in text(renamed)


def test_a_first_upload_names_the_team_of_one_apart_from_a_team_it_looks_like(db: Database, client: TestClient) -> None:
    setup(db)
    with db.session() as session:
        make_user(session, "teaml")
        session.commit()
    assert client.post(TEAMS, headers=auth(db, "ada"), json={"name": "Team1"}).status_code == 201
    assert upload(client, auth(db, "teaml"), HALF).status_code == 202
    wait(client)
    with db.session() as session:
        user = find_user(session, "teaml")
        assert user is not None
        team = team_of(session, user, get_competition(session, "comp").id)
        assert team is not None and team.name == "teaml-2"  # "teaml" looks like "Team1"
