"""Login throttling: sliding windows per user name and per client address, with a fake clock."""

from __future__ import annotations

import pytest

from app.services.accounts.throttle import Limit, LoginThrottle, LoginThrottled, describe_wait


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(clock: Clock, *, max_keys: int = 100) -> LoginThrottle:
    return LoginThrottle(per_name=Limit(3, 60), per_address=Limit(5, 60), max_keys=max_keys, clock=clock)


def test_a_name_is_locked_after_its_limit_until_the_oldest_failure_ages_out() -> None:
    clock = Clock()
    throttle = make(clock)
    for offset in (0, 10, 20):  # failures at 1000, 1010, 1020
        clock.now = 1000 + offset
        throttle.check("ada", "10.0.0.1")
        throttle.failed("ada", "10.0.0.1")
    clock.now = 1030
    with pytest.raises(LoginThrottled) as refused:
        throttle.check("ADA", "10.0.0.2")  # names compare without case, from any address
    assert refused.value.retry_after == 30  # the failure at 1000 leaves the window at 1060
    assert refused.value.message == "Too many failed logins for this user name. Try again in 30 seconds."
    clock.now = 1060
    throttle.check("ada", "10.0.0.2")  # two failures left in the window: allowed again


def test_an_address_is_locked_after_failures_over_many_names() -> None:
    clock = Clock()
    throttle = make(clock)
    for n in range(5):
        throttle.failed(f"user{n}", "10.0.0.9")
    with pytest.raises(LoginThrottled) as refused:
        throttle.check("someone-else", "10.0.0.9")
    assert "from your address" in refused.value.message
    assert refused.value.retry_after == 60
    throttle.check("someone-else", "10.0.0.8")


def test_a_correct_password_clears_the_name_but_not_the_address() -> None:
    clock = Clock()
    throttle = make(clock)
    for _ in range(2):
        throttle.failed("ada", "10.0.0.1")
    throttle.succeeded("ada")
    for _ in range(2):
        throttle.failed("ada", "10.0.0.1")
    throttle.check("ada", "10.0.0.3")  # 2 failures since the success, the limit is 3
    throttle.failed("bob", "10.0.0.1")
    with pytest.raises(LoginThrottled):  # the address has 5 failures: 2 + 2 + 1
        throttle.check("cy", "10.0.0.1")


def test_the_number_of_keys_kept_is_bounded() -> None:
    clock = Clock()
    throttle = make(clock, max_keys=2)
    for name in ("a", "b", "c"):
        for _ in range(3):
            throttle.failed(name, name)
    throttle.check("a", "a")  # the oldest key was dropped to keep two
    with pytest.raises(LoginThrottled):
        throttle.check("c", "c")


def test_waits_in_words() -> None:
    assert [describe_wait(s) for s in (1, 40, 60, 89, 90, 900)] == [
        "1 second",
        "40 seconds",
        "1 minute",
        "2 minutes",
        "2 minutes",
        "15 minutes",
    ]
