"""Account guarantees that hang on how the database serializes writers, on SQLite and PostgreSQL in
one run (``each_database``), through the real app with real threads released together:

* 80 wrong passwords for one name at once: at most the limit (5) reach the password hash (answered
  401); every other one is refused with 429 and ``Retry-After`` before any hashing. Before the
  attempts were reserved atomically, 41 of 80 were checked.
* teams of one name created at once, and names that differ only in case or Unicode form or look alike
  (``Équipe``, ``équipе`` with a Cyrillic ``е``): one team, every other answer the 409 ``name_taken``
  (never a 500 from the unique index).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.storage.db import Database
from app.storage.models import LoginCounter, Team
from app.storage.models.accounts import team_name_key
from tests.app.builders import PASSWORD, make_competition, make_user
from tests.security.databases import app_on, each_database
from tests.security.test_races import race, token

__all__ = ["each_database"]

ATTEMPTS, LIMIT = 80, 5


@contextmanager
def competition_with_accounts(
    database: Database, folder: Path, names: list[str]
) -> Iterator[tuple[TestClient, list[dict[str, str]]]]:
    """Competition ``comp`` (organizer olga) and an account per name on ``database``; the app on it and
    each account's token headers, in the names' order."""
    with database.session() as session:
        make_user(session, "olga", organizer=True)
        for name in names:
            make_user(session, name)
        make_competition(session, organizers=("olga",))
        session.commit()
    with app_on(database, folder) as client:
        yield client, [token(database, name) for name in names]


def test_eighty_wrong_passwords_at_once_check_at_most_the_limit(each_database: Database, tmp_path: Path) -> None:
    with each_database.session() as session:
        make_user(session, "ada")
        session.commit()
    with app_on(each_database, tmp_path) as client:
        guess = {"name": "ada", "password": "not the password"}
        answers = race([lambda: client.post("/api/v1/tokens", json=guess) for _ in range(ATTEMPTS)])
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses == [401] * LIMIT + [429] * (ATTEMPTS - LIMIT)
        for refused in (answer for answer in answers if answer.status_code == 429):
            assert refused.json()["error"] == "login_throttled"
            assert 1 <= int(refused.headers["retry-after"]) == refused.json()["retry_after"] <= 15 * 60
        # The name is locked for everyone now, the right password included, and the page says the same.
        right = client.post("/api/v1/tokens", json={"name": "ada", "password": PASSWORD})
        assert right.status_code == 429
        page = client.get("/login")
        csrf = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        form = {"csrf_token": csrf, "name": "ADA", "password": PASSWORD}
        assert client.post("/login", data=form, follow_redirects=False).status_code == 429
    with each_database.session() as session:
        by_scope = {
            scope: failures for scope, failures in session.execute(select(LoginCounter.scope, LoginCounter.failures))
        }
    assert by_scope == {"name": LIMIT, "address": LIMIT}


def test_one_team_name_created_at_once_gives_one_team_and_409s(
    each_database: Database, tmp_path: Path, labels: object
) -> None:
    with competition_with_accounts(each_database, tmp_path, [f"user{n}" for n in range(9)]) as (client, headers):
        # Spellings that differ in case or Unicode form, and lookalikes: a Cyrillic е (U+0435), a zero-width space.
        spellings = ["Équipe", "équipe", "ÉQUIPE", "E\u0301quipe", "équipе", "Équ\u200bipe", "éQUIPE", "E\u0301QUIPE"]
        answers = race(
            [
                lambda h=h, s=s: client.post("/api/v1/competitions/comp/teams", headers=h, json={"name": s})
                for h, s in zip(headers[:8], spellings, strict=True)
            ]
        )
        assert sorted(answer.status_code for answer in answers) == [201] + [409] * 7
        assert {answer.json()["error"] for answer in answers if answer.status_code == 409} == {"name_taken"}
        # One after the other too: a later spelling of a taken name is the same 409.
        later = client.post("/api/v1/competitions/comp/teams", headers=headers[8], json={"name": "équipe "})
        assert (later.status_code, later.json()["error"]) == (409, "name_taken")
    with each_database.session() as session:
        assert session.scalar(select(func.count()).select_from(Team)) == 1


def test_renames_to_one_name_at_once_give_one_rename_and_409s(
    each_database: Database, tmp_path: Path, labels: object
) -> None:
    """Six founders rename their teams to spellings of one name at once: one rename, five 409s; and a
    later rename to a name that differs only in case or form is the same 409."""
    with competition_with_accounts(each_database, tmp_path, [f"founder{n}" for n in range(6)]) as (client, headers):
        for n, h in enumerate(headers):
            made = client.post("/api/v1/competitions/comp/teams", headers=h, json={"name": f"Team {n}"})
            assert made.status_code == 201
        spellings = ["Straße", "STRASSE", "strasse", "Strasse", "straße", "STRAẞE"]
        answers = race(
            [
                lambda h=h, s=s: client.patch("/api/v1/competitions/comp/team", headers=h, json={"name": s})
                for h, s in zip(headers, spellings, strict=True)
            ]
        )
        assert sorted(answer.status_code for answer in answers) == [200] + [409] * 5
        assert {answer.json()["error"] for answer in answers if answer.status_code == 409} == {"name_taken"}
        first, second = [n for n, answer in enumerate(answers) if answer.status_code == 409][:2]
        later = client.patch(
            "/api/v1/competitions/comp/team", headers=headers[first], json={"name": f"Team\u00a0{second}"}
        )
        assert (later.status_code, later.json()["error"]) == (409, "name_taken")  # NFKC: a no-break space is a space
    with each_database.session() as session:
        keys = session.scalars(select(Team.name_key).order_by(Team.name_key)).all()
    assert keys == sorted(["strasse", *(team_name_key(f"Team {n}") for n in range(6) if answers[n].status_code == 409)])
