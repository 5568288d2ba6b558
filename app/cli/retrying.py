"""Requests of ``podium submit`` to a running server, retried where that is safe.

An upload carries an ``Idempotency-Key`` (one per run of the command, or the caller's), so sending it
again after a connection error, a timeout or an answer that never arrived cannot store it twice: the
server answers with the submission the first request made. Connection errors, timeouts and the
answers that mean "try again later" (502, 503 and 504; a ``Retry-After`` is honoured, up to the
longest wait) are retried with exponential backoff; any other answer is returned as it is.
"""

from __future__ import annotations

import functools
import ssl
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

#: Answers that mean the server (or a proxy before it) could not take the request just now.
RETRY_STATUSES = frozenset({502, 503, 504})


@functools.cache
def tls() -> ssl.SSLContext:
    """The certificates a request checks a server against, loaded once per process (httpx's defaults:
    ``SSL_CERT_FILE``, ``SSL_CERT_DIR`` or certifi's bundle). ``httpx.request`` would load them again
    for every request, about 20 ms of CPU each, paid on every poll of ``podium submit --wait``."""
    return httpx.create_ssl_context()


def new_key() -> str:
    return uuid.uuid4().hex


def retry_after(response: httpx.Response) -> float:
    """The seconds a ``Retry-After`` header asks for (0 when absent or a date)."""
    try:
        return max(0.0, float(response.headers.get("Retry-After", "0")))
    except ValueError:
        return 0.0


def request(
    method: str,
    url: str,
    *,
    attempts: int = 6,
    backoff: float = 1.0,
    longest: float = 30.0,
    say: Callable[[str], None] = lambda _: None,
    sleep: Callable[[float], None] = time.sleep,
    **kwargs: Any,
) -> httpx.Response:
    """``method url`` with up to ``attempts`` tries, waiting ``backoff`` seconds after the first
    failure, then twice as long each time (at most ``longest``); ``say`` is told of each retry. The
    last failure is raised (``httpx.TransportError``) or returned (a 502/503/504)."""
    wait = backoff
    for attempt in range(1, attempts + 1):
        try:
            response = httpx.request(method, url, verify=tls(), **kwargs)
        except httpx.TransportError as exc:
            if attempt == attempts:
                raise
            reason = f"no answer ({type(exc).__name__}: {exc})"
            pause = wait
        else:
            if response.status_code not in RETRY_STATUSES or attempt == attempts:
                return response
            reason = f"the server answered {response.status_code}"
            pause = max(wait, min(retry_after(response), longest))
        say(f"{reason}; sending it again in {pause:g} s (try {attempt + 1} of {attempts})")
        sleep(pause)
        wait = min(wait * 2, longest)
    raise AssertionError("unreachable")  # pragma: no cover
