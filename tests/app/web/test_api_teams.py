"""Managing a team through the API: its founder renames it and removes members, members leave, and the
team's limits hold through all of it (leaving and rejoining never gives a fresh allowance)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.storage.db import Database
from tests.app.builders import HALF, make_user, phase_spec
from tests.app.web.test_api import auth, setup, upload

TEAM = "/api/v1/competitions/comp/team"


def owls(client: TestClient, founder: dict[str, str], *members: dict[str, str]) -> str:
    """The team Owls founded by ``founder`` and joined by ``members``; its invite code."""
    code = client.post("/api/v1/competitions/comp/teams", headers=founder, json={"name": "Owls"}).json()["invite_code"]
    for member in members:
        assert client.post(f"{TEAM}s/join", headers=member, json={"invite_code": code}).status_code == 200
    return str(code)


def test_the_founder_renames_the_team_and_names_stay_unique(db: Database, client: TestClient) -> None:
    setup(db)
    ada, bob = auth(db, "ada"), auth(db, "bob")
    owls(client, ada, bob)
    assert client.get(TEAM, headers=bob).json()["founder"] == "ada"
    refused = client.patch(TEAM, headers=bob, json={"name": "Bobcats"})
    assert refused.status_code == 403 and "founder (ada)" in refused.json()["detail"]
    assert client.patch(TEAM, headers=ada, json={"name": "  "}).status_code == 422
    renamed = client.patch(TEAM, headers=ada, json={"name": "Night Owls"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "Night Owls"
    assert client.get(TEAM, headers=bob).json()["name"] == "Night Owls"
    olga = auth(db, "olga")
    assert client.post(f"{TEAM}s", headers=olga, json={"name": "Hawks"}).status_code == 201
    taken = client.patch(TEAM, headers=ada, json={"name": "HAWKS"})
    assert (taken.status_code, taken.json()["error"]) == (409, "name_taken")
    assert client.patch(TEAM, headers=ada, json={"name": "night owls"}).status_code == 200  # its own name, recased


def test_the_founder_removes_a_member_who_needs_a_new_invitation_to_come_back(db: Database, client: TestClient) -> None:
    setup(db)
    ada, bob = auth(db, "ada"), auth(db, "bob")
    with db.session() as session:
        make_user(session, "cat")
        session.commit()
    cat = auth(db, "cat")
    old_code = owls(client, ada, bob, cat)
    assert client.delete(f"{TEAM}/members/cat", headers=bob).status_code == 403
    assert client.delete(f"{TEAM}/members/ada", headers=ada).json()["error"] == "remove_yourself"
    assert client.delete(f"{TEAM}/members/olga", headers=ada).status_code == 404
    removed = client.delete(f"{TEAM}/members/cat", headers=ada)
    assert removed.status_code == 200
    assert removed.json()["members"] == ["ada", "bob"]
    assert removed.json()["invite_code"] not in (None, old_code)
    assert client.get(TEAM, headers=cat).status_code == 404
    assert client.post(f"{TEAM}s/join", headers=cat, json={"invite_code": old_code}).status_code == 404


def test_leaving_and_rejoining_never_resets_the_teams_allowance(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(total_limit=2))
    ada, bob = auth(db, "ada"), auth(db, "bob")
    code = owls(client, ada, bob)
    assert upload(client, ada, HALF).status_code == 202
    assert upload(client, bob, HALF).status_code == 202
    assert upload(client, bob, HALF).status_code == 429  # the team's two are used

    left = client.post(f"{TEAM}/leave", headers=bob)
    assert left.status_code == 200 and left.json()["members"] == ["ada"] and left.json()["invite_code"] is None
    # Having submitted for Owls, bob gets no fresh allowance: no team of one, no new team, no other team.
    alone = upload(client, bob, HALF)
    assert (alone.status_code, alone.json()["error"]) == (409, "bound_to_team")
    assert client.post(f"{TEAM}s", headers=bob, json={"name": "Bobcats"}).json()["error"] == "bound_to_team"
    olga = auth(db, "olga")
    hawks = client.post(f"{TEAM}s", headers=olga, json={"name": "Hawks"}).json()["invite_code"]
    assert client.post(f"{TEAM}s/join", headers=bob, json={"invite_code": hawks}).json()["error"] == "bound_to_team"
    # Back in Owls, the team's count is as it was.
    assert client.post(f"{TEAM}s/join", headers=bob, json={"invite_code": code}).status_code == 200
    assert upload(client, bob, HALF).status_code == 429
    # The founder leaving changes nothing either: bob founds nothing new, the team keeps its count.
    assert client.post(f"{TEAM}/leave", headers=ada).status_code == 200
    assert client.get(TEAM, headers=bob).json()["founder"] == "bob"
    assert upload(client, ada, HALF).json()["error"] == "bound_to_team"
    assert upload(client, bob, HALF).status_code == 429


def test_a_member_who_never_submitted_leaves_freely_and_a_team_of_one_cannot_be_left(
    db: Database, client: TestClient
) -> None:
    setup(db, phase_spec(total_limit=1))
    ada, bob = auth(db, "ada"), auth(db, "bob")
    owls(client, ada, bob)
    assert upload(client, ada, HALF).status_code == 202
    assert client.post(f"{TEAM}/leave", headers=bob).status_code == 200
    assert upload(client, bob, HALF).json()["team"] == "bob"  # his own team of one: he used nothing of Owls'
    refused = client.post(f"{TEAM}/leave", headers=bob)
    assert (refused.status_code, refused.json()["error"]) == (409, "solo_team")
    assert client.post(f"{TEAM}/leave", headers=auth(db, "olga")).status_code == 404
