"""Accounts and credentials: creating users, checking and changing passwords, one-time reset links,
ending sessions, issuing and checking API tokens.

Passwords are stored as argon2id hashes with the parameters of RFC 9106's low-memory profile (64 MiB, 3 passes,
4 lanes: about 0.2 s of CPU a hash). ``PODIUM_PASSWORD_HASH_PROFILE=cheapest`` (``use_password_profile``) makes
new hashes with argon2-cffi's cheapest parameters instead, for test suites that create and log in thousands of
users; a hash records its parameters, so either kind is verified, and a login rehashes a password stored with
other parameters than the current ones. An API token is shown once, when it is issued; only its
SHA-256 is stored, so a copy of the database does not give access (a token is 256 random bits, so a
fast hash is enough, unlike for passwords). Reset links are stored the same way.

Ending sessions: every browser session carries the user's ``session_version``; ``end_sessions``
bumps it, so every session of the user ends at once (logging out does that). A new password (changed
or set through a reset link) and an admin's "sign out everywhere" end every session *and revoke
every API token* of the user: a token obtained with the old password, or held by whoever the admin
locks out, must not outlive it. Scripts then need a new token (``POST /api/v1/tokens``).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import timedelta
from functools import lru_cache

from argon2 import PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.services.errors import Conflict, InvalidInput, NotAuthenticated, NotFound
from app.storage.db import end_read_transaction
from app.storage.models import ApiToken, PasswordReset, User
from app.storage.types import utcnow

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024
TOKEN_PREFIX = "pod_"  # noqa: S105  (a visible prefix, not a secret)

#: The argon2 parameters ``PODIUM_PASSWORD_HASH_PROFILE`` may name.
PASSWORD_PROFILES = {"rfc9106-low-memory": profiles.RFC_9106_LOW_MEMORY, "cheapest": profiles.CHEAPEST}

_hasher = PasswordHasher.from_parameters(PASSWORD_PROFILES["rfc9106-low-memory"])


def use_password_profile(name: str) -> None:
    """Hash new passwords with the parameters of the named profile (a key of ``PASSWORD_PROFILES``), in this
    process; the app and the command line call it with the setting."""
    global _hasher
    parameters = PASSWORD_PROFILES[name]
    if _hasher.time_cost != parameters.time_cost or _hasher.memory_cost != parameters.memory_cost:
        _hasher = PasswordHasher.from_parameters(parameters)
        _dummy_hash.cache_clear()


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
    try:
        with session.begin_nested():  # two registrations of one name at once: the second is the 409
            session.add(user)
    except IntegrityError:
        if find_user(session, name) is None:
            raise
        raise Conflict(f"the user name {name!r} is taken", code="name_taken") from None
    return user


def end_sessions(session: Session, user: User) -> None:
    """End every browser session of ``user`` (in one ``UPDATE``, so two at once both count)."""
    session.execute(update(User).where(User.id == user.id).values(session_version=User.session_version + 1))
    session.refresh(user, ["session_version"])


def revoke_all_tokens(session: Session, user: User) -> int:
    """Delete every API token of ``user``; returns how many there were."""
    result = session.execute(delete(ApiToken).where(ApiToken.user_id == user.id))
    return int(getattr(result, "rowcount", 0) or 0)


def sign_out_everywhere(session: Session, user: User) -> int:
    """End every session and revoke every API token of ``user``; returns how many tokens there were."""
    end_sessions(session, user)
    return revoke_all_tokens(session, user)


def set_password(session: Session, user: User, password: str) -> int:
    """A new password for ``user``: every session ends and every API token is revoked (the number of
    tokens is returned); the caller starts a fresh session where it should go on."""
    user.password_hash = hash_password(check_password(password))
    session.flush()
    return sign_out_everywhere(session, user)


def change_password_of(session: Session, user_id: int, current: str, new: str) -> tuple[User, int]:
    """``set_password`` for the user ``user_id`` once ``current`` is their password (refused like a
    wrong login otherwise); the user and the number of API tokens revoked. Callers run it through the
    login throttle, so that a stolen session cannot guess the password either."""
    check_password(new)
    user = session.get(User, user_id)
    if user is None:
        raise NotAuthenticated("wrong user name or password")
    user = authenticate(session, user.name, current)
    return user, set_password(session, user, new)


#: How long a reset link works unless told otherwise.
RESET_LINK_HOURS = 24


def issue_reset_link(session: Session, user: User, hours: float = RESET_LINK_HOURS) -> str:
    """A one-time token that lets whoever holds it set ``user``'s password within ``hours``; it is
    returned once (only its SHA-256 is kept), and any older unused link of the user stops working."""
    if not 0 < hours <= 24 * 30:
        raise InvalidInput("the link was refused", [{"where": "hours", "message": "more than 0, at most 720"}])
    if user.is_deleted:  # a deleted account stays deleted: nobody sets a password for it
        raise Conflict(f"{user.name!r} is a deleted account", code="already_deleted")
    token = secrets.token_urlsafe(32)
    session.execute(delete(PasswordReset).where(PasswordReset.user_id == user.id, PasswordReset.used_at.is_(None)))
    now = utcnow()
    session.add(
        PasswordReset(
            user_id=user.id, token_hash=_token_hash(token), created_at=now, expires_at=now + timedelta(hours=hours)
        )
    )
    session.flush()
    return token


_BAD_LINK = "this reset link is not valid: it was used already, it expired, or it never existed"


def reset_link_user(session: Session, token: str) -> User:
    """The user a still-valid reset link is for; refuses any other link alike."""
    query = (
        select(User)
        .join(PasswordReset, PasswordReset.user_id == User.id)
        .where(
            PasswordReset.token_hash == _token_hash(token),
            PasswordReset.used_at.is_(None),
            PasswordReset.expires_at > utcnow(),
        )
    )
    user = session.scalar(query)
    if user is None:
        raise NotFound(_BAD_LINK, code="reset_link_invalid")
    return user


def use_reset_link(session: Session, token: str, password: str) -> User:
    """Set the password through a reset link, which then never works again: the link is taken by one
    conditional ``UPDATE``, so of two uses at once only one sets a password."""
    check_password(password)
    user = reset_link_user(session, token)
    now = utcnow()
    taken = session.execute(
        update(PasswordReset)
        .where(
            PasswordReset.token_hash == _token_hash(token),
            PasswordReset.used_at.is_(None),
            PasswordReset.expires_at > now,
        )
        .values(used_at=now)
    )
    if getattr(taken, "rowcount", 0) != 1:
        raise NotFound(_BAD_LINK, code="reset_link_invalid")
    set_password(session, user, password)
    return user


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
