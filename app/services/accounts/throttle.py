"""Login throttling: too many failed logins for one user name, or from one client address, and
further attempts are refused for a while, with the time to wait.

The counts live in the database (``LoginCounter``), so every server process shares them, and an
attempt is *reserved* before its password is checked: one ``INSERT .. ON CONFLICT DO UPDATE .. WHERE``
per key adds the attempt only while the key has fewer than ``limit`` failures in its window, and
that statement is atomic on both databases (PostgreSQL locks the row and checks the condition on
its newest version; SQLite runs every write transaction alone, ``BEGIN IMMEDIATE``). So however
many attempts arrive at once, at most ``limit`` of them reach the password hash per window; the
others are refused (429, ``Retry-After``) without hashing anything. The reservation is committed
before the (slow) hash is checked, in a short transaction of its own. A failed check leaves the
reservation as the failure; a correct password clears the name's count and gives the address its
attempt back (one good account must not unlock guessing at others from the same place, and must not
lock its own address either).

A window starts at a key's first failure and lasts ``window`` seconds: a key is locked once it holds
``limit`` failures, until its window ends. Keys are SHA-256 digests (no user name or address is
stored as sent), and windows that ended are deleted as new attempts come in, so the table stays
small whatever names a flood of attempts uses.

Written by hand: it is two statements on a table of the schema, which no library does for us.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from sqlalchemy import case, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.services.errors import ServiceError
from app.storage.db import Database
from app.storage.models import LoginCounter
from app.storage.types import utcnow

T = TypeVar("T")
NAME, ADDRESS = "name", "address"


class LoginThrottled(ServiceError):
    """Too many failed logins; ``wait`` is the number of seconds to wait."""

    status = 429
    default_code = "login_throttled"

    def __init__(self, message: str, *, wait: int) -> None:
        super().__init__(message)
        self.wait = wait

    def retry_after(self, now: datetime) -> int:
        return self.wait

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "retry_after": self.wait}


@dataclass(frozen=True)
class Limit:
    """At most ``failures`` failed attempts per key within ``window`` seconds."""

    failures: int
    window: float


def describe_wait(seconds: int) -> str:
    """``"40 seconds"``, ``"1 minute"``, ``"3 minutes"``: a wait in words, rounded up to whole minutes
    from one minute on."""
    if seconds < 60:
        return f"{seconds} second" + ("" if seconds == 1 else "s")
    minutes = math.ceil(seconds / 60)
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class LoginThrottle:
    """Failed-login counts per user name (any address) and per client address (any name)."""

    def __init__(
        self,
        db: Database,
        *,
        per_name: Limit = Limit(5, 15 * 60),
        per_address: Limit = Limit(20, 15 * 60),
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._db = db
        self._limits = {NAME: per_name, ADDRESS: per_address}
        self._clock = clock

    def _keys(self, name: str, address: str) -> dict[str, str]:
        return {NAME: _digest(name.casefold()), ADDRESS: _digest(address)}

    def _reserve_one(self, session: Session, scope: str, key: str, now: datetime) -> datetime | None:
        """Add an attempt to the key unless it is locked; ``None`` when added, else when its window
        started."""
        limit = self._limits[scope]
        ended = now - timedelta(seconds=limit.window)
        table = LoginCounter.__table__
        expired = table.c.window_start <= ended
        insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
        statement = (
            insert(LoginCounter)
            .values(scope=scope, key=key, failures=1, window_start=now)
            .on_conflict_do_update(
                index_elements=[table.c.scope, table.c.key],
                set_={
                    "failures": case((expired, 1), else_=table.c.failures + 1),
                    "window_start": case((expired, now), else_=table.c.window_start),
                },
                where=expired | (table.c.failures < limit.failures),
            )
            .returning(table.c.failures)
        )
        if session.execute(statement).first() is not None:
            return None
        started = session.scalar(
            select(LoginCounter.window_start).where(LoginCounter.scope == scope, LoginCounter.key == key)
        )
        return started or now

    def reserve(self, name: str, address: str) -> None:
        """Count an attempt for the name and the address, or refuse with ``LoginThrottled`` (and
        count nothing) while either is locked."""
        now = self._clock()
        keys = self._keys(name, address)
        with self._db.session() as session:
            locked = {scope: self._reserve_one(session, scope, key, now) for scope, key in keys.items()}
            waits = {
                scope: (started + timedelta(seconds=self._limits[scope].window) - now).total_seconds()
                for scope, started in locked.items()
                if started is not None
            }
            if waits:
                session.rollback()
                scope = max(waits, key=lambda s: waits[s])
                # ``now`` was read before waiting for the row, so a window may have started after it.
                wait = min(max(1, math.ceil(waits[scope])), math.ceil(self._limits[scope].window))
                reason = "for this user name" if scope == NAME else "from your address"
                raise LoginThrottled(f"Too many failed logins {reason}. Try again in {describe_wait(wait)}.", wait=wait)
            longest = max(limit.window for limit in self._limits.values())
            session.execute(delete(LoginCounter).where(LoginCounter.window_start <= now - timedelta(seconds=longest)))
            session.commit()

    def succeeded(self, session: Session, name: str, address: str) -> None:
        """A correct password: clear the name's failures and give the address its attempt back (a
        count back at zero is deleted), in ``session`` (the login's own transaction, which commits with it)."""
        keys = self._keys(name, address)
        session.execute(delete(LoginCounter).where(LoginCounter.scope == NAME, LoginCounter.key == keys[NAME]))
        address = (LoginCounter.scope == ADDRESS, LoginCounter.key == keys[ADDRESS])
        session.execute(update(LoginCounter).where(*address).values(failures=LoginCounter.failures - 1))
        # A login that only succeeds leaves no trace.
        session.execute(delete(LoginCounter).where(*address, LoginCounter.failures <= 0))

    def attempt(self, session: Session, name: str, address: str, login: Callable[[], T]) -> T:
        """``login()`` (the password check, in ``session``) unless the name or the address is locked.
        An attempt is reserved first and stays counted unless ``login`` succeeds; then the name's
        failures are cleared and the address gets its attempt back, in ``session``. The login page,
        ``POST /api/v1/tokens`` and the password change all go through here, with the same counters.
        ``session`` must not have written yet (on SQLite its transaction would hold the lock that the
        reservation needs)."""
        self.reserve(name, address)
        result = login()
        self.succeeded(session, name, address)
        return result
