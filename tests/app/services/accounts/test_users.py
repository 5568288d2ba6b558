from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import select

from app.services.accounts import users
from app.services.errors import Conflict, InvalidInput, NotAuthenticated
from app.storage.db import Database
from app.storage.models import ApiToken
from tests.app.builders import PASSWORD, make_user


def test_a_password_is_stored_as_an_argon2_hash_and_checked(db: Database) -> None:
    with db.session() as session:
        user = users.create_user(session, "ada", PASSWORD)
        assert user.password_hash.startswith("$argon2")
        assert PASSWORD not in user.password_hash
        assert users.authenticate(session, "ADA", PASSWORD).id == user.id
        with pytest.raises(NotAuthenticated, match="wrong user name or password"):
            users.authenticate(session, "ada", "not the password")
        with pytest.raises(NotAuthenticated, match="wrong user name or password"):
            users.authenticate(session, "nobody", PASSWORD)


def test_names_are_unique_without_regard_to_case(db: Database) -> None:
    with db.session() as session:
        make_user(session, "Ada")
        with pytest.raises(Conflict, match="taken"):
            make_user(session, "ada")


@pytest.mark.parametrize("name", ["", "-ada", "a b", "ädä", "x" * 65])
def test_bad_names_are_refused(db: Database, name: str) -> None:
    with db.session() as session, pytest.raises(InvalidInput):
        users.create_user(session, name, PASSWORD)


def test_a_short_password_is_refused(db: Database) -> None:
    with db.session() as session, pytest.raises(InvalidInput) as refused:
        users.create_user(session, "ada", "short")
    assert refused.value.problems == [{"where": "password", "message": "must be 8 to 1024 characters"}]


def test_a_token_is_stored_only_as_its_sha256(db: Database) -> None:
    with db.session() as session:
        user = make_user(session)
        token = users.issue_token(session, user, "laptop")
        stored = session.scalar(select(ApiToken.token_hash))
        assert stored == hashlib.sha256(token.encode()).hexdigest()
        assert users.user_for_token(session, token).id == user.id
        with pytest.raises(NotAuthenticated):
            users.user_for_token(session, token + "x")
        assert users.revoke_tokens(session, user, "laptop") == 1
        with pytest.raises(NotAuthenticated):
            users.user_for_token(session, token)
