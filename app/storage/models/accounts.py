"""People and their credentials: users, API tokens, password reset links, teams and team membership,
and the login throttle's counters."""

from __future__ import annotations

import unicodedata
from datetime import datetime

from disarm import skeleton_key
from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship, validates

from app.storage.models.base import Base
from app.storage.types import UTCDateTime, utcnow

#: The password hash of a deleted account (``services.accounts.removal``): not an argon2 hash, so no password
#: verifies against it.
DELETED_PASSWORD = "!deleted"  # noqa: S105  (a mark, not a secret)


def deleted_name(user_id: int) -> str:
    """The placeholder name of the deleted account ``user_id``; a space is no user name's character, so it names no
    other account."""
    return f"deleted user #{user_id}"


class User(Base):
    """An account. ``is_admin`` may do anything; ``is_organizer`` may create competitions. A deleted account is a
    placeholder (``DELETED_PASSWORD``, ``deleted_name``) kept where boards name it."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    email: Mapped[str | None] = mapped_column(String(254))
    password_hash: Mapped[str] = mapped_column(String(255))
    is_admin: Mapped[bool] = mapped_column(default=False)
    is_organizer: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: Every browser session carries the version it started under; bumping it (logging out, a new
    #: password, an admin's "sign out everywhere") ends all of them at once.
    session_version: Mapped[int] = mapped_column(default=0, server_default="0")

    @property
    def is_deleted(self) -> bool:
        return self.password_hash == DELETED_PASSWORD


class ApiToken(Base):
    """A bearer token for the API; only its SHA-256 is stored, the token itself is shown once."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    label: Mapped[str] = mapped_column(String(100), default="")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    user: Mapped[User] = relationship()


class PasswordReset(Base):
    """A one-time link that sets a new password (``podium user reset-link``); only the SHA-256 of its
    token is stored. It works once (``used_at``) and until ``expires_at``."""

    __tablename__ = "password_resets"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class LoginCounter(Base):
    """Failed logins of one key (``scope`` ``name`` or ``address``, ``key`` the SHA-256 of the user
    name's casefolded form or of the client address) counted since ``window_start``."""

    __tablename__ = "login_counters"

    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    failures: Mapped[int] = mapped_column(default=0)
    window_start: Mapped[datetime] = mapped_column(UTCDateTime)


#: The longest a team name's comparison key may be (NFKC can make a name of 100 characters longer).
MAX_TEAM_NAME_KEY = 400


def team_name_key(name: str) -> str:
    """What two team names are compared by: the confusable skeleton (Unicode TS #39, by ``disarm``) of the
    name NFKC-normalized and casefolded, so that names people cannot tell apart are one name: ``"vіctim"``
    (a Cyrillic ``і``) and ``"victim"``, ``"team1"`` and ``"teaml"``, and, as before, ``"Équipe"`` and
    ``"équipe"`` or ``"Straße"`` and ``"STRASSE"``; invisible characters are dropped. Case is folded first,
    as names are compared whatever their case (TS #39 alone would tell ``ICE`` from ``ice``: ``I`` looks
    like ``l``). A change of the key, a new ``disarm`` release included, needs a migration that recomputes
    the keys (as 0010 does)."""
    return skeleton_key(
        unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold()), digit_policy="tr39"
    )


class Team(Base):
    """Who submits in a competition. Limits are counted per team; ``is_solo`` marks a team of one
    created automatically for a user who submitted without joining a team. ``name_key`` is the
    name's comparison form (``team_name_key``), unique per competition, kept in step with ``name``."""

    __tablename__ = "teams"
    __table_args__ = (UniqueConstraint("competition_id", "name"), UniqueConstraint("competition_id", "name_key"))

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    name_key: Mapped[str] = mapped_column(String(MAX_TEAM_NAME_KEY))
    invite_code: Mapped[str] = mapped_column(String(32), unique=True)
    is_solo: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    @validates("name")
    def _keep_key(self, _: str, name: str) -> str:
        self.name_key = team_name_key(name)
        return name


class TeamMember(Base):
    """A user's membership of a team; a user is in at most one team per competition."""

    __tablename__ = "team_members"
    __table_args__ = (UniqueConstraint("competition_id", "user_id"),)

    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"))
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
