"""My submissions across competitions: the page (linked from the top navigation) and the API."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.storage.db import Database
from tests.app.builders import HALF, PERFECT, make_competition, make_user, phase_spec
from tests.app.web.test_api import auth, upload, wait
from tests.app.web.test_pages import login


def test_my_submissions_lists_every_team_of_mine_across_competitions(db: Database, client: TestClient) -> None:
    with db.session() as session:
        for name in ("olga", "ada", "bob"):
            make_user(session, name, organizer=name == "olga")
        make_competition(session, "comp", organizers=("olga",))
        make_competition(session, "other", organizers=("olga",), phases=(phase_spec("dev", visibility="hidden"),))
        session.commit()
    ada, bob = auth(db, "ada"), auth(db, "bob")
    mine = [
        upload(client, ada, HALF).json()["id"],
        upload(client, ada, PERFECT, phase="/api/v1/competitions/other/tasks/labels/phases/dev").json()["id"],
    ]
    theirs = upload(client, bob, PERFECT).json()["id"]
    wait(client)

    listed = client.get("/api/v1/me/submissions", headers=ada).json()["submissions"]
    assert [s["id"] for s in listed] == mine[::-1]  # newest first, bob's not among them
    assert [(s["competition"], s["metrics"]) for s in listed] == [("other", None), ("comp", {"accuracy": 0.5})]
    assert client.get("/api/v1/me/submissions").status_code == 401

    login(client, "ada")
    home = client.get("/").text
    assert 'href="/submissions">My submissions</a>' in home  # in the top navigation
    page = client.get("/submissions").text
    assert "Competition comp" in page and "Competition other" in page
    assert "accuracy 50.00" in page and "hidden" in page
    assert f'href="/submissions/{theirs}"' not in page
    client.cookies.clear()
    assert client.get("/submissions", follow_redirects=False).status_code == 303  # to the login page
