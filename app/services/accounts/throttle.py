"""Login throttling: too many failed logins for one user name, or from one client address, and
further attempts are refused for a while, with the time to wait.

The state lives in this process's memory, not in the database, on purpose: counting a failure
must not cost a write transaction (which on SQLite queues behind every other writer) and the
schema stays free of bookkeeping tables. The price is that the counts restart with the process
and that N server processes allow N times the attempts; with argon2 behind every attempt that
still keeps guessing slow. The windows are sliding: a key is locked while it has ``limit``
failures younger than ``window`` seconds, until the oldest of them ages out.

Written by hand because no library in the project does this; it is a dict of deques with a cap on
how many keys it keeps (the oldest keys are dropped first), so a flood of names cannot exhaust memory.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from app.services.errors import NotAuthenticated, ServiceError

T = TypeVar("T")


class LoginThrottled(ServiceError):
    """Too many failed logins; ``retry_after`` is the number of seconds to wait."""

    status = 429
    default_code = "login_throttled"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "retry_after": self.retry_after}


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


class _Window:
    """Failure times per key, within one ``Limit``."""

    def __init__(self, limit: Limit, max_keys: int) -> None:
        self.limit = limit
        self.max_keys = max_keys
        self.failures: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, key: str, now: float) -> deque[float] | None:
        times = self.failures.get(key)
        if times is None:
            return None
        while times and times[0] <= now - self.limit.window:
            times.popleft()
        if not times:
            del self.failures[key]
            return None
        return times

    def wait(self, key: str, now: float) -> float:
        """Seconds until ``key`` may try again (0 when it may now)."""
        times = self._recent(key, now)
        if times is None or len(times) < self.limit.failures:
            return 0.0
        return times[-self.limit.failures] + self.limit.window - now

    def fail(self, key: str, now: float) -> None:
        times = self._recent(key, now) or deque()
        times.append(now)
        self.failures[key] = times
        self.failures.move_to_end(key)
        while len(self.failures) > self.max_keys:
            self.failures.popitem(last=False)


class LoginThrottle:
    """Failed-login counts per user name (any address) and per client address (any name)."""

    def __init__(
        self,
        *,
        per_name: Limit = Limit(5, 15 * 60),
        per_address: Limit = Limit(20, 15 * 60),
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._names = _Window(per_name, max_keys)
        self._addresses = _Window(per_address, max_keys)
        self._clock = clock
        self._lock = threading.Lock()

    def check(self, name: str, address: str) -> None:
        """Refuse with ``LoginThrottled`` while the name or the address is locked."""
        now = self._clock()
        with self._lock:
            by_name = self._names.wait(name.casefold(), now)
            by_address = self._addresses.wait(address, now)
        wait = math.ceil(max(by_name, by_address))
        if wait <= 0:
            return
        reason = "for this user name" if by_name >= by_address else "from your address"
        raise LoginThrottled(f"Too many failed logins {reason}. Try again in {describe_wait(wait)}.", retry_after=wait)

    def failed(self, name: str, address: str) -> None:
        now = self._clock()
        with self._lock:
            self._names.fail(name.casefold(), now)
            self._addresses.fail(address, now)

    def succeeded(self, name: str) -> None:
        """A correct password clears the name's failures (not the address's: one good account must
        not unlock guessing at others from the same place)."""
        with self._lock:
            self._names.failures.pop(name.casefold(), None)

    def attempt(self, name: str, address: str, login: Callable[[], T]) -> T:
        """``login()`` (the password check) unless the name or the address is locked: a
        ``NotAuthenticated`` it raises counts as a failure, a success clears the name's failures.
        The login page and ``POST /api/v1/tokens`` both go through here, with the same counters."""
        self.check(name, address)
        try:
            result = login()
        except NotAuthenticated:
            self.failed(name, address)
            raise
        self.succeeded(name)
        return result
