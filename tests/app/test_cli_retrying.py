"""``podium submit``'s requests: retried after connection errors and 502/503/504 with backoff, never
after other answers; a real HTTP server on this machine answers them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import httpx
import pytest

from app.cli import retrying as retrying_client
from tests.app.distributed.cluster import free_port


class Flaky(BaseHTTPRequestHandler):
    """Answers the first ``failures`` requests with 503 (``Retry-After: 3``), then 202; counts them."""

    failures = 2
    seen: list[str] = []  # noqa: RUF012  (shared by the handler instances of one server)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Flaky.seen.append(self.headers.get("Idempotency-Key", ""))
        failed = len(Flaky.seen) <= Flaky.failures
        self.send_response(503 if failed else 202)
        if failed:
            self.send_header("Retry-After", "3")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[str]:
    Flaky.seen = []
    server = HTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_503_is_retried_with_backoff_and_retry_after(flaky: str) -> None:
    said: list[str] = []
    waited: list[float] = []
    answer = retrying_client.request(
        "POST", flaky, say=said.append, sleep=waited.append, headers={"Idempotency-Key": "k"}, content=b"x"
    )
    assert answer.status_code == 202
    assert waited == [3.0, 3.0]  # Retry-After (3 s) over the backoff (1 s, then 2 s)
    assert Flaky.seen == ["k", "k", "k"]  # the same key every time
    assert said[0].startswith("the server answered 503; sending it again in 3 s (try 2 of 6)")


def test_the_last_503_is_returned_and_other_answers_at_once(flaky: str) -> None:
    Flaky.failures = 10
    try:
        answer = retrying_client.request("POST", flaky, attempts=3, sleep=lambda _: None, content=b"x")
    finally:
        Flaky.failures = 2
    assert (answer.status_code, len(Flaky.seen)) == (503, 3)


def test_connection_errors_are_retried_then_raised() -> None:
    waited: list[float] = []
    with pytest.raises(httpx.ConnectError):
        retrying_client.request("GET", f"http://127.0.0.1:{free_port()}/", attempts=4, sleep=waited.append)
    assert waited == [1.0, 2.0, 4.0]


def test_requests_share_one_tls_context(flaky: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request of the process checks servers against one loaded certificate bundle: a context per
    request cost about 20 ms of CPU on each poll."""
    made: list[object] = []
    create = httpx.create_ssl_context

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(create(*args, **kwargs))
        return made[-1]

    # Where httpx's transports make the context of each new client, and where Podium may make its own.
    monkeypatch.setattr(httpx._transports.default, "create_ssl_context", counted)
    monkeypatch.setattr(httpx, "create_ssl_context", counted)
    if hasattr(retrying_client, "tls"):
        retrying_client.tls.cache_clear()
    Flaky.failures = 0
    try:
        for _ in range(4):
            assert retrying_client.request("POST", flaky, content=b"x").status_code == 202
    finally:
        Flaky.failures = 2
    assert len({id(context) for context in made}) == 1
