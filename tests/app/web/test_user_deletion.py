"""A site admin deletes an account (the API, the account page, which asks first, and ``podium user delete``): what
a revealed board's final ranking keeps stays under ``deleted user #N``, a team of others goes on without the user,
a team of the user alone goes with its submissions, and the user's sessions, API tokens and password stop working
at once."""

from __future__ import annotations

from urllib.parse import quote

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from typer.testing import CliRunner

from app.cli import app as cli
from app.storage.db import Database
from app.storage.models import CompetitionOrganizer, Submission, Team, TeamMember, User
from tests.app.builders import HALF, PASSWORD, PERFECT, make_competition, make_user, phase_spec
from tests.app.web import test_pages as pages
from tests.app.web.test_api import PHASE, auth, entries, setup, upload, wait

OTHER = "/api/v1/competitions/other/tasks/labels/phases/dev"
ALONE = "/api/v1/competitions/alone/tasks/labels/phases/dev"


def _world(db: Database) -> int:
    """``comp`` (hidden, to be revealed), ``other`` and ``alone`` (public), the admin ``root``; ada's id."""
    setup(db, phase_spec(visibility="hidden"))
    with db.session() as session:
        make_user(session, "root", admin=True)
        make_competition(session, "other", organizers=("olga",))
        make_competition(session, "alone", organizers=("olga",))
        ada = session.scalar(select(User).where(User.name == "ada"))
        assert ada is not None
        ada.email = "ada@example.org"
        session.commit()
        return ada.id


def _count(db: Database, *where: object) -> int:
    with db.session(read_only=True) as session:
        return session.scalar(select(func.count(Submission.id)).where(*where)) or 0


def test_an_admin_deletes_an_account_and_boards_keep_what_they_must(db: Database, client: TestClient) -> None:
    ada_id = _world(db)
    ada, bob, olga, root = auth(db, "ada"), auth(db, "bob"), auth(db, "olga"), auth(db, "root")
    # comp: ada alone, her perfect run on the final ranking once revealed, her half run not.
    half = upload(client, ada, HALF).json()["id"]
    kept = upload(client, ada, PERFECT).json()["id"]
    upload(client, bob, HALF)
    # other: ada and bob in one team, an upload of ada's; alone: ada's team of one, never revealed.
    invite = client.post("/api/v1/competitions/other/teams", headers=ada, json={"name": "Pair"}).json()["invite_code"]
    assert client.post("/api/v1/competitions/other/teams/join", headers=bob, json={"invite_code": invite}).is_success
    pair_run = upload(client, ada, HALF, phase=OTHER).json()["id"]
    upload(client, ada, HALF, phase=ALONE)
    wait(client)
    assert client.post(f"{PHASE}/reveal", headers=olga).status_code == 200
    pages.login(client, "ada")
    assert client.get("/account", follow_redirects=False).status_code == 200

    for headers in (ada, olga):  # a participant, an organizer: no admins
        refused = client.delete("/api/v1/users/bob", headers=headers)
        assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")
        assert "only site admins may delete accounts" in refused.json()["detail"]
    assert client.delete("/api/v1/users/bob").status_code == 401
    assert client.delete("/api/v1/users/nobody", headers=root).status_code == 404
    own = client.delete("/api/v1/users/root", headers=root)
    assert (own.status_code, own.json()["error"]) == (409, "own_account")

    answer = client.delete("/api/v1/users/ada", headers=root)
    assert answer.status_code == 200, answer.text
    placeholder = f"deleted user #{ada_id}"
    assert answer.json() == {
        "user": placeholder,
        "teams_left": 1,
        "teams_deleted": 1,
        "memberships_kept": 1,
        "submissions_deleted": 2,
        "submissions_kept": 1,
        "tokens_revoked": 1,
    }
    # Her token, her browser session and her password stop working at once.
    assert client.get("/api/v1/me", headers=ada).status_code == 401
    assert client.get("/account", follow_redirects=False).status_code == 303
    assert pages.login(client, "ada").status_code != 303
    assert client.post("/api/v1/tokens", json={"name": placeholder, "password": PASSWORD}).status_code == 401
    with db.session(read_only=True) as session:
        row = session.get(User, ada_id)
        assert row is not None and (row.name, row.email, row.is_deleted) == (placeholder, None, True)
        # comp: the revealed ranking keeps her run and her team under the placeholder; her other run went.
        team = session.scalar(select(Team).join(TeamMember).where(TeamMember.user_id == ada_id))
        assert team is not None and team.name == placeholder
        assert session.get(Submission, kept) is not None and session.get(Submission, half) is None
        # other: the team goes on with bob, her upload with it (under the placeholder).
        pair = session.scalar(select(Team).where(Team.name == "Pair"))
        assert pair is not None
        members_left = list(session.scalars(select(TeamMember.user_id).where(TeamMember.team_id == pair.id)))
        assert members_left == [_id(db, "bob")]
        assert session.get(Submission, pair_run) is not None
    assert [e[1] for e in entries(client)] == [placeholder, "bob"]
    assert "ada" not in client.get(f"{PHASE}/leaderboard").text
    members = client.get("/api/v1/competitions/other/team", headers=bob).json()["members"]
    assert [m["name"] if isinstance(m, dict) else m for m in members] == ["bob"]
    # alone: her team of one went, with its submission; its usage drops to nothing.
    assert client.get("/api/v1/competitions/alone/usage", headers=olga).json()["uploaded"] == {"files": 0, "bytes": 0}
    again = client.delete(f"/api/v1/users/{quote(placeholder)}", headers=root)
    assert (again.status_code, again.json()["error"]) == (409, "already_deleted")


def test_a_user_being_scored_is_deleted_once_the_run_ended(db: Database, client: TestClient) -> None:
    _world(db)
    ada, root = auth(db, "ada"), auth(db, "root")
    running = upload(client, ada, HALF, phase=ALONE).json()["id"]
    wait(client)
    with db.session() as session:
        row = session.get(Submission, running)
        assert row is not None
        row.status = "running"
        session.commit()
    busy = client.delete("/api/v1/users/ada", headers=root)
    assert (busy.status_code, busy.json()["error"]) == (409, "user_busy")
    assert client.get("/api/v1/me", headers=ada).status_code == 200  # nothing happened


def test_the_account_page_asks_before_deleting_and_the_command_line_deletes(db: Database, client: TestClient) -> None:
    _world(db)
    ada = auth(db, "ada")
    pages.login(client, "root")
    page = client.get("/account")
    assert 'action="/account/delete-user"' in page.text
    asked = client.post("/account/delete-user", data={"csrf_token": pages.token(page), "name": "ada"})
    assert asked.status_code == 200 and "Delete the account ada?" in asked.text
    assert '<input type="hidden" name="name" value="ada">' in asked.text
    assert client.get("/api/v1/me", headers=ada).status_code == 200
    done = client.post(
        "/account/delete-user", data={"csrf_token": pages.token(asked), "name": "ada", "confirmed": "yes"}
    )
    assert done.status_code == 200 and "The account ada is deleted" in done.text
    assert client.get("/api/v1/me", headers=ada).status_code == 401
    pages.login(client, "olga")
    refused = client.post(
        "/account/delete-user", data={"csrf_token": pages.token(client.get("/account")), "name": "bob"}
    )
    assert refused.status_code == 403

    env = {"PODIUM_DATABASE_URL": db.url}
    bob = auth(db, "bob")
    deleted = CliRunner().invoke(cli, ["user", "delete", "bob", "--yes"], env=env)
    assert deleted.exit_code == 0, deleted.output
    assert deleted.stdout.startswith("the account bob is deleted: 0 submission(s) and 0 team(s) deleted")
    assert client.get("/api/v1/me", headers=bob).status_code == 401
    missing = CliRunner().invoke(cli, ["user", "delete", "bob", "--yes"], env=env)
    assert (missing.exit_code, missing.stderr) == (2, "there is no user named 'bob'\n")
    with db.session(read_only=True) as session:
        bob_id = session.scalar(select(User.id).where(User.name.like("deleted user #%"), User.id != _id(db, "ada")))
    link = CliRunner().invoke(cli, ["user", "reset-link", f"deleted user #{bob_id}"], env=env)
    assert link.exit_code == 2 and "is a deleted account" in link.stderr

    # An organizer's account: the role goes, the competitions stay (site admins run them).
    olga_id = _id(db, "olga")
    assert CliRunner().invoke(cli, ["user", "delete", "olga", "--yes"], env=env).exit_code == 0
    with db.session(read_only=True) as session:
        roles = session.scalar(select(func.count()).where(CompetitionOrganizer.user_id == olga_id))
    assert roles == 0
    assert client.get("/api/v1/competitions/comp").status_code == 200


def _id(db: Database, name: str) -> int:
    with db.session(read_only=True) as session:
        found = session.scalar(select(User.id).where(User.name == name))
        return found if found is not None else -1
