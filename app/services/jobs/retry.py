"""Retrying a job's step after a transient error, with exponential backoff.

Only errors that say "the database or the broker could not be reached or answered in time" are
retried; anything else is a bug or a bad input and fails at once. A step is a short transaction,
so trying it again is safe: either it committed or nothing of it remains. After the last retry the
caller gets ``GaveUp``, which carries what the organizers are told. Each kind of job declares its
``RetryPolicy``; the numbers (retries, backoff) are settings, the same on every tier.
"""

from __future__ import annotations

import logging
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import sqlalchemy.exc

from app.config import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")

#: What "unreachable or too slow right now" looks like: the database driver's operational errors
#: (connection refused or lost, lock or statement timeouts, SQLite's "database is locked"), a pool
#: with no free connection, and the broker clients' connection errors (``BROKER_ERRORS``).
DATABASE_ERRORS: tuple[type[BaseException], ...] = (
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.DisconnectionError,
    sqlalchemy.exc.TimeoutError,
)
#: The broker clients' connection errors, as (module, class). They are looked up when an error is caught, among
#: the modules loaded, rather than imported here: kombu and redis cost a server that uses no broker (the embedded
#: mode) a tenth of its start, and an error of theirs can only be raised once its module is loaded.
BROKER_ERRORS = (
    ("kombu.exceptions", "OperationalError"),
    ("redis.exceptions", "ConnectionError"),
    ("redis.exceptions", "TimeoutError"),
)


def transient_errors() -> tuple[type[BaseException], ...]:
    """``DATABASE_ERRORS`` and those of ``BROKER_ERRORS`` whose module this process has loaded."""
    loaded = (getattr(sys.modules[module], name) for module, name in BROKER_ERRORS if module in sys.modules)
    return (*DATABASE_ERRORS, *loaded)


@dataclass(frozen=True)
class RetryPolicy:
    """What a kind of job does about trouble that is not its input's fault: after one of the
    ``transient`` errors a database step is tried again (``settings.transient_retries`` times, with
    exponential backoff); any other error fails the job at once. A row whose lease expired (its
    worker died) is claimed again by the next job, up to ``settings.max_attempts`` attempts."""

    @property
    def transient(self) -> tuple[type[BaseException], ...]:
        return transient_errors()


DEFAULT_POLICY = RetryPolicy()


class GaveUp(Exception):
    """A step failed with transient errors on every try; ``reason`` is written for organizers."""

    def __init__(self, what: str, tries: int, waited: float, error: BaseException) -> None:
        self.what = what
        self.tries = tries
        self.error = error
        self.reason = (
            f"gave up {what} after {tries} tries over {waited:g} s of waiting; the last error was {describe(error)}"
        )
        super().__init__(self.reason)


def describe(error: BaseException) -> str:
    """The error's type and the first line of its message (a database error's SQL is left out)."""
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def error_text(exc: BaseException) -> str:
    """A job's unexpected error for the organizers: the type and message, then the traceback's end."""
    lines = traceback.format_exception(exc)
    return f"{type(exc).__name__}: {exc}\n\n" + "".join(lines[-30:])


def backoff(settings: Settings, retry: int) -> float:
    """Seconds to wait before retry number ``retry`` (1 for the first): the base, doubled each time, capped."""
    return float(min(settings.transient_backoff_max_seconds, settings.transient_backoff_seconds * 2 ** (retry - 1)))


def with_retries(settings: Settings, what: str, step: Callable[[], T], *, policy: RetryPolicy = DEFAULT_POLICY) -> T:
    """``step()``, tried again after each of the policy's transient errors up to
    ``settings.transient_retries`` times; ``what`` names the step in logs and in the reason of
    ``GaveUp`` (like "claiming submission 7")."""
    waited = 0.0
    for retry in range(settings.transient_retries + 1):
        try:
            return step()
        except policy.transient as exc:
            if retry == settings.transient_retries:
                raise GaveUp(what, retry + 1, waited, exc) from exc
            wait = backoff(settings, retry + 1)
            log.warning("%s failed (%s); retrying in %.1f s", what, describe(exc), wait)
            time.sleep(wait)
            waited += wait
    raise AssertionError("unreachable")  # the loop returns or raises
