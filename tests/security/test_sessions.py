"""Sessions end for real: a copied session cookie stops working once its user logs out, changes the
password (API or account page), sets one through a reset link, or is signed out everywhere by a site
admin (API or ``podium user sign-out``). A new password and "sign out everywhere" revoke the user's
API tokens too; logging out does not. Reset links work once, expire, and are stored hashed.

Each test keeps a second client holding a copy of the victim's cookie (what an attacker who took it
would hold) and checks that after the event it is anonymous: the account page sends it to the login
form, and a form post with its CSRF token is refused as not logged in.
"""

from __future__ import annotations

import re
from datetime import timedelta

from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import select, update
from typer.testing import CliRunner

from app.cli import app as cli
from app.services.accounts import users
from app.storage.db import Database
from app.storage.models import ApiToken, PasswordReset
from app.storage.types import utcnow
from tests.app.builders import PASSWORD, make_user
from tests.app.web.test_pages import login, token

NEW_PASSWORD = "a brand new passphrase"


def setup(db: Database) -> dict[str, str]:
    """``ada`` (with an API token) and the site admin ``root``; the headers of ada's token."""
    with db.session() as session:
        ada = make_user(session, "ada")
        make_user(session, "root", admin=True)
        issued = users.issue_token(session, ada, "script")
        session.commit()
    return {"Authorization": f"Bearer {issued}"}


def admin_headers(db: Database) -> dict[str, str]:
    with db.session() as session:
        root = users.get_user(session, "root")
        issued = users.issue_token(session, root)
        session.commit()
    return {"Authorization": f"Bearer {issued}"}


def logged_in(client: TestClient) -> bool:
    """Whether the client's cookie is a live session (the account page shows instead of the login)."""
    return client.get("/account", follow_redirects=False).status_code == 200


def stolen_copy(client: TestClient) -> TestClient:
    """Another client holding a copy of ``client``'s session cookie."""
    thief = TestClient(client.app)
    thief.cookies.set("podium_session", client.cookies["podium_session"])
    assert logged_in(thief)
    return thief


def test_logging_out_ends_every_session_of_the_user_but_keeps_api_tokens(db: Database, client: TestClient) -> None:
    api = setup(db)
    assert login(client, "ada").status_code == 303
    thief = stolen_copy(client)
    other_browser = TestClient(client.app)
    assert login(other_browser, "ada").status_code == 303
    form = client.get("/account")
    assert client.post("/logout", data={"csrf_token": token(form)}, follow_redirects=False).status_code == 303
    assert not logged_in(client)
    assert not logged_in(thief)  # the copied cookie is anonymous now
    assert not logged_in(other_browser)  # "every session of that user"
    refused = thief.post("/account/password", data={"csrf_token": token(form)}, follow_redirects=False)
    assert refused.status_code in (401, 403)  # its CSRF token went with the session
    assert client.get("/api/v1/me", headers=api).status_code == 200  # API tokens are not sessions


def change_password_by_api(client: TestClient, api: dict[str, str], current: str, new: str) -> Response:
    return client.post("/api/v1/me/password", headers=api, json={"current_password": current, "new_password": new})


def test_a_new_password_by_api_ends_sessions_and_revokes_tokens(db: Database, client: TestClient) -> None:
    api = setup(db)
    assert login(client, "ada").status_code == 303
    thief = stolen_copy(client)
    wrong = change_password_by_api(client, api, "not my password", NEW_PASSWORD)
    assert (wrong.status_code, wrong.json()["error"]) == (401, "not_authenticated")
    short = change_password_by_api(client, api, PASSWORD, "short")
    assert short.status_code == 422
    assert logged_in(thief)  # refused changes change nothing

    changed = change_password_by_api(client, api, PASSWORD, NEW_PASSWORD)
    assert changed.status_code == 200
    assert changed.json() == {"user": "ada", "tokens_revoked": 1}
    assert not logged_in(client) and not logged_in(thief)
    assert client.get("/api/v1/me", headers=api).status_code == 401  # the token of the request too
    assert login(client, "ada", PASSWORD).status_code == 401
    assert login(client, "ada", NEW_PASSWORD).status_code == 303


def test_the_wrong_current_password_is_throttled_like_a_login(db: Database, client: TestClient) -> None:
    api = setup(db)
    answers = [change_password_by_api(client, api, f"guess {n}", NEW_PASSWORD).status_code for n in range(7)]
    assert answers == [401] * 5 + [429] * 2


def test_a_new_password_on_the_account_page_keeps_this_browser_and_ends_the_others(
    db: Database, client: TestClient
) -> None:
    api = setup(db)
    assert login(client, "ada").status_code == 303
    thief = stolen_copy(client)
    page = client.get("/account")
    form = {"csrf_token": token(page), "current_password": PASSWORD}
    mismatch = client.post("/account/password", data={**form, "new_password": NEW_PASSWORD, "new_password_again": "x"})
    assert mismatch.status_code == 400 and "the two new passwords differ" in mismatch.text
    wrong = client.post(
        "/account/password",
        data={
            **form,
            "current_password": "nope nope",
            "new_password": NEW_PASSWORD,
            "new_password_again": NEW_PASSWORD,
        },
    )
    assert wrong.status_code == 401 and "wrong user name or password" in wrong.text
    done = client.post(
        "/account/password",
        data={**form, "new_password": NEW_PASSWORD, "new_password_again": NEW_PASSWORD},
        follow_redirects=False,
    )
    assert (done.status_code, done.headers["location"]) == (303, "/account")
    assert "every other session was ended and 1 API token revoked" in client.get("/account").text
    assert logged_in(client)  # this browser goes on
    assert not logged_in(thief)
    assert client.get("/api/v1/me", headers=api).status_code == 401


def test_an_admin_signs_a_user_out_everywhere_by_api(db: Database, client: TestClient) -> None:
    api = setup(db)
    assert login(client, "ada").status_code == 303
    thief = stolen_copy(client)
    assert client.post("/api/v1/users/root/sign-out", headers=api).status_code == 403  # only site admins
    assert client.post("/api/v1/users/nobody/sign-out", headers=admin_headers(db)).status_code == 404
    done = client.post("/api/v1/users/ADA/sign-out", headers=admin_headers(db))
    assert done.json() == {"user": "ada", "tokens_revoked": 1}
    assert not logged_in(client) and not logged_in(thief)
    assert client.get("/api/v1/me", headers=api).status_code == 401
    assert login(client, "ada").status_code == 303  # the password still works


def test_an_admin_signs_a_user_out_everywhere_from_the_account_page(db: Database, client: TestClient) -> None:
    api = setup(db)
    assert login(client, "ada").status_code == 303
    thief = stolen_copy(client)
    refused = client.post("/account/sign-out", data={"csrf_token": token(client.get("/account")), "name": "root"})
    assert refused.status_code == 403  # only site admins

    admin = TestClient(client.app)
    assert login(admin, "root").status_code == 303
    page = admin.get("/account")
    assert "Sign a user out everywhere" in page.text
    missing = admin.post("/account/sign-out", data={"csrf_token": token(page), "name": "nobody"})
    assert missing.status_code == 404 and "there is no user named" in missing.text
    done = admin.post("/account/sign-out", data={"csrf_token": token(page), "name": "ada"}, follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, "/account")
    assert "ada was signed out everywhere: every session ended, 1 API token(s) revoked." in admin.get("/account").text
    assert not logged_in(client) and not logged_in(thief)
    assert client.get("/api/v1/me", headers=api).status_code == 401
    assert logged_in(admin)


def test_podium_user_sign_out_ends_sessions_and_revokes_tokens(db: Database, client: TestClient) -> None:
    api = setup(db)
    assert login(client, "ada").status_code == 303
    thief = stolen_copy(client)
    done = CliRunner().invoke(cli, ["user", "sign-out", "ada"], env={"PODIUM_DATABASE_URL": db.url})
    assert (done.exit_code, done.stdout) == (
        0,
        "signed ada out everywhere: every session ended, 1 API token(s) revoked\n",
    )
    assert not logged_in(thief)
    assert client.get("/api/v1/me", headers=api).status_code == 401
    missing = CliRunner().invoke(cli, ["user", "sign-out", "nobody"], env={"PODIUM_DATABASE_URL": db.url})
    assert (missing.exit_code, missing.stderr) == (2, "there is no user named 'nobody'\n")


def reset_link(db: Database, *args: str) -> str:
    made = CliRunner().invoke(
        cli,
        ["user", "reset-link", *args],
        env={"PODIUM_DATABASE_URL": db.url, "PODIUM_PUBLIC_URL": "https://podium.example.org/"},
    )
    assert made.exit_code == 0, made.stderr
    return made.stdout.strip()


def test_a_reset_link_sets_a_password_once_and_ends_every_session(db: Database, client: TestClient) -> None:
    api = setup(db)
    assert login(client, "ada").status_code == 303
    thief = stolen_copy(client)
    link = reset_link(db, "ada")
    found = re.fullmatch(r"https://podium\.example\.org(/reset/[A-Za-z0-9_-]{43})", link)
    assert found, link
    path = found.group(1)
    with db.session() as session:  # only a hash of the token is kept
        stored = session.scalars(select(PasswordReset.token_hash)).all()
    assert len(stored) == 1 and path.rsplit("/", 1)[1] not in stored[0]

    stranger = TestClient(client.app)
    page = stranger.get(path)
    assert page.status_code == 200 and "Set a new password for ada" in page.text
    assert page.headers["referrer-policy"] == "no-referrer"
    form = {"csrf_token": token(page), "new_password": NEW_PASSWORD, "new_password_again": NEW_PASSWORD}
    done = stranger.post(path, data=form, follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, "/login")
    assert not logged_in(client) and not logged_in(thief)
    assert client.get("/api/v1/me", headers=api).status_code == 401
    assert login(stranger, "ada", NEW_PASSWORD).status_code == 303

    again = TestClient(client.app)  # one use
    assert again.get(path).status_code == 404
    assert again.post(path, data={**form, "csrf_token": token(again.get("/login"))}).status_code == 404
    assert login(again, "ada", NEW_PASSWORD).status_code == 303


def test_a_refused_reset_shows_its_form_again_and_the_link_still_works(db: Database, client: TestClient) -> None:
    setup(db)
    path = reset_link(db, "ada").split("podium.example.org", 1)[1]
    form = {"csrf_token": token(client.get(path)), "new_password": NEW_PASSWORD}
    differ = client.post(path, data={**form, "new_password_again": NEW_PASSWORD + "!"})
    assert differ.status_code == 400 and "the two passwords differ" in differ.text
    assert "Set a new password for ada" in differ.text
    assert differ.headers["referrer-policy"] == "no-referrer"
    assert login(TestClient(client.app), "ada").status_code == 303  # the old password still holds
    done = client.post(path, data={**form, "new_password_again": NEW_PASSWORD}, follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, "/login")


def test_reset_links_expire_and_a_new_one_replaces_the_old(db: Database, client: TestClient) -> None:
    setup(db)
    first = reset_link(db, "ada").split("podium.example.org", 1)[1]
    second = reset_link(db, "ada", "--hours", "1").split("podium.example.org", 1)[1]
    assert client.get(first).status_code == 404  # replaced
    assert client.get(second).status_code == 200
    with db.session() as session:
        session.execute(update(PasswordReset).values(expires_at=utcnow() - timedelta(seconds=1)))
        session.commit()
    assert client.get(second).status_code == 404
    assert client.get("/reset/made-up-token").status_code == 404
    for hours in ("0", "-1", "100000"):
        refused = CliRunner().invoke(
            cli, ["user", "reset-link", "ada", "--hours", hours], env={"PODIUM_DATABASE_URL": db.url}
        )
        assert refused.exit_code == 2 and "hours" in refused.stderr
    with db.session() as session:
        assert session.scalar(select(ApiToken.label)) == "script"  # issuing links revokes nothing
