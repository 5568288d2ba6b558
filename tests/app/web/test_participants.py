"""Organizers answer participation requests (approve, refuse, remove) through the API and the
organize page; a refused user may neither submit nor ask again, a removed one may ask again."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.storage.db import Database
from tests.app.builders import HALF
from tests.app.web.test_api import auth, setup, upload
from tests.app.web.test_pages import login, text, token

COMP = "/api/v1/competitions/comp"


def states(client: TestClient, headers: dict[str, str]) -> dict[str, str]:
    return {p["user"]: p["state"] for p in client.get(f"{COMP}/participants", headers=headers).json()["participants"]}


def test_refused_users_may_not_submit_nor_ask_again_and_removed_ones_may(db: Database, client: TestClient) -> None:
    setup(db, participation="approval")
    olga, ada, bob = auth(db, "olga"), auth(db, "ada"), auth(db, "bob")
    for who in (ada, bob):
        assert client.post(f"{COMP}/participation", headers=who).json()["state"] == "pending"
    assert states(client, olga) == {"ada": "pending", "bob": "pending"}
    assert client.post(f"{COMP}/participants/ada/refuse", headers=ada).status_code == 403
    refused = client.post(f"{COMP}/participants/ada/refuse", headers=olga)
    assert (refused.status_code, refused.json()["state"], refused.json()["approved"]) == (200, "refused", False)
    again = client.post(f"{COMP}/participation", headers=ada)
    assert (again.status_code, again.json()["error"]) == (409, "participation_refused")
    assert client.post(f"{COMP}/teams", headers=ada, json={"name": "A"}).status_code == 201
    refused_upload = upload(client, ada, HALF)
    assert (refused_upload.status_code, refused_upload.json()["detail"]) == (
        403,
        "the organizers of 'comp' declined your taking part",
    )

    assert client.post(f"{COMP}/participants/bob/approve", headers=olga).json()["state"] == "approved"
    assert client.post(f"{COMP}/teams", headers=bob, json={"name": "B"}).status_code == 201
    assert upload(client, bob, HALF).status_code == 202
    assert client.delete(f"{COMP}/participants/bob", headers=olga).status_code == 204
    assert states(client, olga) == {"ada": "refused"}
    removed = upload(client, bob, HALF)
    assert (removed.status_code, removed.json()["error"]) == (403, "forbidden")
    assert client.post(f"{COMP}/participation", headers=bob).json()["state"] == "pending"
    assert client.delete(f"{COMP}/participants/nobody", headers=olga).status_code == 404
    # An organizer may change their mind: approving a refused user lets them in.
    assert client.post(f"{COMP}/participants/ada/approve", headers=olga).json()["state"] == "approved"


def test_a_refusal_keeps_someone_out_of_an_open_competition(db: Database, client: TestClient) -> None:
    setup(db)
    olga, ada = auth(db, "olga"), auth(db, "ada")
    assert client.post(f"{COMP}/teams", headers=ada, json={"name": "A"}).status_code == 201
    assert client.post(f"{COMP}/participation", headers=ada).json()["state"] == "approved"
    client.post(f"{COMP}/participants/ada/refuse", headers=olga)
    refused = upload(client, ada, HALF)
    assert refused.status_code == 403
    assert refused.json()["detail"] == "the organizers of 'comp' declined your taking part"


def test_the_competition_page_shows_the_senders_request_and_organizers_answer_it(
    db: Database, client: TestClient
) -> None:
    setup(db, participation="approval")
    login(client, "ada")
    page = client.get("/c/comp")
    assert "Ask to take part" in page.text and 'href="/c/comp/organize"' not in page.text
    asked = client.post("/c/comp/participate", data={"csrf_token": token(page)})
    assert "Your request to take part is pending" in text(asked)
    assert "Ask to take part" not in asked.text

    login(client, "olga")
    page = client.get("/c/comp")
    assert "Ask to take part" not in page.text and 'href="/c/comp/organize"' in page.text
    organize = client.get("/c/comp/organize")
    assert "ada" in text(organize) and "pending" in text(organize)
    approved = client.post("/c/comp/organize/participants/approve", data={"csrf_token": token(organize), "name": "ada"})
    assert "ada may take part now." in text(approved)
    missing = client.post("/c/comp/organize/participants/refuse", data={"csrf_token": token(organize), "name": "zed"})
    assert missing.status_code == 404
    wrong = client.post("/c/comp/organize/participants/ban", data={"csrf_token": token(organize), "name": "ada"})
    assert wrong.status_code == 422

    login(client, "ada")
    assert "You take part" in text(client.get("/c/comp"))


def test_the_submit_page_says_a_sent_request_is_pending_not_to_ask_again(db: Database, client: TestClient) -> None:
    setup(db, participation="approval")
    login(client, "ada")
    submit = "/c/comp/labels/dev/submit"
    assert "Ask for it on the competition page." in text(client.get(submit))
    client.post("/c/comp/participate", data={"csrf_token": token(client.get("/c/comp"))})
    shown = text(client.get(submit))
    assert "Your request is pending" in shown
    assert "Ask for it" not in shown

    olga = auth(db, "olga")
    client.post(f"{COMP}/participants/ada/refuse", headers=olga)
    shown = text(client.get(submit))
    assert "was refused by the organizers" in shown and "Ask for it" not in shown
