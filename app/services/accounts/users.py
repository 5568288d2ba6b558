"""Accounts and credentials: creating users, checking passwords, issuing and checking API tokens.

Passwords are stored as argon2 hashes. An API token is shown once, when it is issued; only its
SHA-256 is stored, so a copy of the database does not give access (a token is 256 random bits, so a
fast hash is enough, unlike for passwords).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.services.errors import Conflict, InvalidInput, NotAuthenticated, NotFound
from app.storage.db import end_read_transaction
from app.storage.models import ApiToken, User

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024
TOKEN_PREFIX = "pod_"  # noqa: S105  (a visible prefix, not a secret)

_hasher = PasswordHasher()


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _hasher.hash(secrets.token_urlsafe(16))


def check_name(name: str, what: str = "user name") -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise InvalidInput(
            f"invalid {what} {name!r}",
            [{"where": "name", "message": "1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit"}],
        )
    return name


def check_password(password: str) -> str:
    if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
        raise InvalidInput(
            "the password was refused",
            [{"where": "password", "message": f"must be {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} characters"}],
        )
    return password


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def find_user(session: Session, name: str) -> User | None:
    """The user with this name, compared without regard to case."""
    return session.scalar(select(User).where(func.lower(User.name) == name.lower()))


def get_user(session: Session, name: str) -> User:
    user = find_user(session, name)
    if user is None:
        raise NotFound(f"there is no user named {name!r}")
    return user


def create_user(
    session: Session,
    name: str,
    password: str,
    *,
    email: str | None = None,
    is_organizer: bool = False,
    is_admin: bool = False,
    password_hash: str | None = None,
) -> User:
    """A new account. Names are unique without regard to case (``Ada`` and ``ada`` are one name).

    ``password_hash`` lets a caller that already holds an argon2 hash skip hashing (tests).
    """
    check_name(name)
    if password_hash is None:
        password_hash = hash_password(check_password(password))
    if find_user(session, name) is not None:
        raise Conflict(f"the user name {name!r} is taken", code="name_taken")
    user = User(name=name, email=email, password_hash=password_hash, is_organizer=is_organizer, is_admin=is_admin)
    session.add(user)
    session.flush()
    return user


def set_password(session: Session, user: User, password: str) -> None:
    user.password_hash = hash_password(check_password(password))
    session.flush()


def authenticate(session: Session, name: str, password: str) -> User:
    """The user whose name and password these are; the same refusal whichever of the two is wrong."""
    user = find_user(session, name)
    stored = user.password_hash if user is not None else _dummy_hash()
    end_read_transaction(session)  # hashing takes a while: hold no lock meanwhile
    try:
        _hasher.verify(stored, password)
    except (VerificationError, InvalidHashError):
        raise NotAuthenticated("wrong user name or password") from None
    if user is None:  # the dummy hash matched: impossible in practice, refused all the same
        raise NotAuthenticated("wrong user name or password")
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = hash_password(password)
        session.flush()
    return user


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def issue_token(session: Session, user: User, label: str = "") -> str:
    """A new API token for ``user``; the returned text is the only copy that will ever exist."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    session.add(ApiToken(user_id=user.id, label=label[:100], token_hash=_token_hash(token)))
    session.flush()
    return token


def revoke_tokens(session: Session, user: User, label: str) -> int:
    """Delete the user's tokens with this label; returns how many there were."""
    result = session.execute(delete(ApiToken).where(ApiToken.user_id == user.id, ApiToken.label == label))
    return int(getattr(result, "rowcount", 0) or 0)


def user_for_token(session: Session, token: str) -> User:
    """The owner of an API token; refuses unknown tokens."""
    user = session.scalar(select(User).join(ApiToken).where(ApiToken.token_hash == _token_hash(token)))
    if user is None:
        raise NotAuthenticated("the API token is not valid")
    return user
