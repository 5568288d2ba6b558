"""Login throttling on the test database: windows per user name and per client address, with a fake
clock. (The race of many attempts at once is in ``tests/security/test_login_throttle.py``.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from app.services.accounts.throttle import Limit, LoginThrottle, LoginThrottled, describe_wait
from app.services.errors import NotAuthenticated
from app.storage.db import Database
from app.storage.models import LoginCounter


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def at(self, seconds: float) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)


def make(db: Database, clock: Clock) -> LoginThrottle:
    return LoginThrottle(db, per_name=Limit(3, 60), per_address=Limit(5, 60), clock=clock)


def fail(throttle: LoginThrottle, db: Database, name: str, address: str) -> None:
    """One attempt whose password is wrong."""

    def wrong() -> None:
        raise NotAuthenticated("wrong user name or password")

    with db.session() as session, pytest.raises(NotAuthenticated):
        throttle.attempt(session, name, address, wrong)


def succeed(throttle: LoginThrottle, db: Database, name: str, address: str) -> str:
    with db.session() as session:
        result = throttle.attempt(session, name, address, lambda: "ok")
        session.commit()
    return result


def test_a_name_is_locked_after_its_limit_until_its_window_ends(db: Database) -> None:
    clock = Clock()
    throttle = make(db, clock)
    for offset in (0, 10, 20):  # failures at 0, 10, 20 s: the window started at 0
        clock.at(offset)
        fail(throttle, db, "ada", "10.0.0.1")
    clock.at(30)
    with pytest.raises(LoginThrottled) as refused:
        throttle.reserve("ADA", "10.0.0.2")  # names compare without case, from any address
    assert refused.value.wait == 30  # the window started at 0 and lasts 60 s
    assert refused.value.message == "Too many failed logins for this user name. Try again in 30 seconds."
    clock.at(60)
    assert succeed(throttle, db, "ada", "10.0.0.2") == "ok"  # a new window


def test_a_refused_attempt_is_not_counted(db: Database) -> None:
    """While the name is locked, its attempts count against neither the name nor the address."""
    clock = Clock()
    throttle = make(db, clock)
    for _ in range(3):
        fail(throttle, db, "ada", "10.0.0.1")
    for _ in range(10):
        with pytest.raises(LoginThrottled):
            throttle.reserve("ada", "10.0.0.1")
    with db.session() as session:
        failures = session.scalars(select(LoginCounter.failures).order_by(LoginCounter.scope)).all()
    assert failures == [3, 3]  # address, name


def test_an_address_is_locked_after_failures_over_many_names(db: Database) -> None:
    clock = Clock()
    throttle = make(db, clock)
    for n in range(5):
        fail(throttle, db, f"user{n}", "10.0.0.9")
    with pytest.raises(LoginThrottled) as refused:
        throttle.reserve("someone-else", "10.0.0.9")
    assert "from your address" in refused.value.message
    assert refused.value.wait == 60
    throttle.reserve("someone-else", "10.0.0.8")


def test_a_correct_password_clears_the_name_and_gives_the_address_its_attempt_back(db: Database) -> None:
    clock = Clock()
    throttle = make(db, clock)
    for _ in range(2):
        fail(throttle, db, "ada", "10.0.0.1")
    succeed(throttle, db, "ada", "10.0.0.1")
    for _ in range(2):
        fail(throttle, db, "ada", "10.0.0.1")
    throttle.reserve("ada", "10.0.0.3")  # 2 failures since the success (+1 reserved now), the limit is 3
    fail(throttle, db, "bob", "10.0.0.1")
    with pytest.raises(LoginThrottled):  # the address holds 5 failures: 2 + 2 + 1 (the success gave its back)
        throttle.reserve("cy", "10.0.0.1")


def test_nothing_is_stored_as_sent_and_ended_windows_are_deleted(db: Database) -> None:
    clock = Clock()
    throttle = make(db, clock)
    fail(throttle, db, "secret-name", "192.0.2.7")
    with db.session() as session:
        keys = session.scalars(select(LoginCounter.key)).all()
    assert len(keys) == 2 and all(len(key) == 64 and "secret" not in key for key in keys)
    clock.at(61)
    fail(throttle, db, "other", "192.0.2.8")  # the first two windows ended: deleted as this one comes in
    with db.session() as session:
        assert session.scalar(select(func.count()).select_from(LoginCounter)) == 2


def test_waits_in_words() -> None:
    assert [describe_wait(s) for s in (1, 40, 60, 89, 90, 900)] == [
        "1 second",
        "40 seconds",
        "1 minute",
        "2 minutes",
        "2 minutes",
        "15 minutes",
    ]


def test_a_login_that_only_succeeds_leaves_no_trace(db: Database) -> None:
    throttle = make(db, Clock())
    for _ in range(3):
        succeed(throttle, db, "ada", "10.0.0.1")
    with db.session() as session:
        assert session.scalar(select(func.count()).select_from(LoginCounter)) == 0
