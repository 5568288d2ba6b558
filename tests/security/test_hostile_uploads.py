"""Hostile uploads against a real ``podium serve`` over HTTP: each is refused with a 4xx and a JSON
message naming the problem, an over-limit body is cut off while it streams in, the server's peak
memory stays within a bound, and other users are served while a slow upload is in flight.

The server runs as its own process on the test database (SQLite, or PostgreSQL with
``PODIUM_TEST_DATABASE_URL``) holding the example competitions (``podium demo``), with small limits
(2 MB uploads, 32 MB unzipped, 16 zip entries) so that every hostile file is quick to build and send.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from app.storage.db import Database
from scorers import scorer_class
from tests.security import hostile_files as hostile
from tests.security.hostile_cases import HOSTILE, LIMIT, UNZIPPED_LIMIT, ZIP_ENTRIES, Hostile
from tests.security.live_server import TIMEOUT, LiveServer, peak_rss_kb, serve, upload, wait_scored
from tests.security.seed_examples import example, seed_scorers

pytestmark = pytest.mark.slow

#: Growth of the server's peak resident memory allowed for the whole hostile batch: 240 MB measured,
#: nearly all of it the strict parse of the absurd run (a million candidates, 11 MB of JSON once
#: unpacked, become a 90 MB dict, built from a list of pairs). A bomb inflated past its bound (256 MB)
#: or a slow body read to its end would go well past it.
MEMORY_BOUND_KB = 400 * 1024
BOUNDARY = "podium-hostile-boundary"


@pytest.fixture(scope="module")
def server(migrated: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    log_dir = tmp_path_factory.mktemp("hostile")
    limits = {"MAX_UPLOAD_BYTES": str(LIMIT), "MAX_UNZIPPED_BYTES": str(UNZIPPED_LIMIT)}
    with serve(migrated, log_dir, **limits, MAX_ZIP_ENTRIES=str(ZIP_ENTRIES)) as server:
        accepted = upload(server, "svident-detection", example("svident-detection").submission)
        assert accepted.status_code == 202, accepted.text
        assert wait_scored(server, accepted.json()["id"])["status"] == "scored"
        assert httpx.get(server.api(f"{example('svident-detection').path}/leaderboard")).status_code == 200
        yield replace(server, warm_peak_kb=peak_rss_kb(server.pid))


def message_of(response: httpx.Response) -> str:
    """The refusal's detail and problems as one text; also checks that the body is the JSON error."""
    body = response.json()
    assert isinstance(body, dict) and body["error"], body
    problems = " ".join(f"{p.get('where', '')}: {p['message']}" for p in body.get("problems", []))
    return f"{body['detail']} {problems}"


def assert_refused(response: httpx.Response, case: Hostile) -> None:
    assert response.status_code == case.status, response.text[:2000]
    assert response.headers["content-type"].startswith("application/json")
    # The message names the problem without echoing the file: a 2 MB key is shown shortened.
    assert len(response.content) < 16 * 1024
    message = message_of(response)
    for fragment in case.fragments:
        assert fragment in message, message
    if case.status == 413:
        assert response.json()["limit_bytes"] == LIMIT


@pytest.mark.parametrize("case", HOSTILE, ids=[case.name for case in HOSTILE])
def test_hostile_file_is_refused_with_a_message_naming_the_problem(server: LiveServer, case: Hostile) -> None:
    assert_refused(upload(server, case.scorer, case.build(example(case.scorer)), case.filename), case)


def test_every_seed_scorer_meets_hostile_files() -> None:
    assert {case.scorer for case in HOSTILE} == set(seed_scorers())


def test_a_valid_file_zipped_is_accepted_and_scored_for_every_scorer(server: LiveServer) -> None:
    """The counterpart of the refusals: the same phases take a good file, bare or zipped."""
    before = server.count_submissions()
    for name in seed_scorers():
        # A scoring program's results are a zip already.
        data = example(name).submission
        data = data if scorer_class(name).raw_submission else hostile.zipped({"submission.json": data})
        accepted = upload(server, name, data, "run.zip")
        assert accepted.status_code == 202, accepted.text
        assert wait_scored(server, accepted.json()["id"])["status"] == "scored"
    assert server.count_submissions() == before + len(seed_scorers())


# -- hostile requests ---------------------------------------------------------------------------


def _form(*parts: tuple[str, str | None, bytes]) -> bytes:
    """A multipart body from (field name, file name or None, content) parts."""
    out = b""
    for name, filename, content in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + content + b"\r\n"
    return out + f"--{BOUNDARY}--\r\n".encode()


MULTIPART = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}


@pytest.mark.parametrize(
    ("headers", "body", "fragment"),
    [
        ({"Content-Type": "application/json"}, b"{}", "multipart/form-data"),
        (MULTIPART, _form(("method_name", None, b"no file")), "no file was sent"),
        (MULTIPART, _form(("file", "s.json", b"{}"), ("method_description", None, b"d" * 100_000)), "maximum size"),
        (MULTIPART, _form(*[(f"f{i}", None, b"x") for i in range(100)]), "Too many fields"),
        (MULTIPART, _form(*[(f"f{i}", f"{i}.json", b"{}") for i in range(10)]), "Too many files"),
        (MULTIPART, b"--" + BOUNDARY.encode() + b"\r\nContent-Disposition: form-data\r\n\r\n" + bytes(1000), "form"),
        (MULTIPART, _form(("file", "s.json", b"{}"), ("method_name", None, b"a\x00b")), "NUL character"),
        (MULTIPART, _form(("file", "s\x00.json", b"{}")), "file name contains a NUL character"),
    ],
    ids=["not multipart", "no file", "huge field", "many fields", "many files", "broken multipart", "NUL", "NUL name"],
)
def test_hostile_form_is_refused_with_a_message(
    server: LiveServer, headers: dict[str, str], body: bytes, fragment: str
) -> None:
    response = httpx.post(
        server.submissions("svident-detection"),
        headers={**server.auth(), **headers},
        content=body,
        timeout=TIMEOUT,
    )
    assert response.status_code == 422, response.text
    assert fragment in message_of(response)


class SlowBody:
    """A multipart upload streamed in small chunks with pauses, counting what the client got to send;
    ``hold`` (an event) makes it wait after its first chunk until the event is set."""

    CHUNK = 16 * 1024

    def __init__(self, chunks: int, *, pause: float = 0.005, hold: threading.Event | None = None) -> None:
        self.chunks = chunks
        self.pause = pause
        self.hold = hold
        self.sent = 0
        self.started = threading.Event()

    def __iter__(self) -> Iterator[bytes]:
        yield _form(("file", "slow.json", b""))[: -len(f"\r\n--{BOUNDARY}--\r\n")]
        for _ in range(self.chunks):
            yield b" " * self.CHUNK
            self.sent += 1
            self.started.set()
            if self.hold is not None:
                assert self.hold.wait(timeout=60), "the slow upload was never released"
            time.sleep(self.pause)
        yield f"\r\n--{BOUNDARY}--\r\n".encode()

    def send(self, server: LiveServer) -> httpx.Response:
        return httpx.post(
            server.submissions("svident-detection"),
            headers={**server.auth(), **MULTIPART},
            content=iter(self),
            timeout=TIMEOUT,
        )


OVER_LIMIT = Hostile("slow", "svident-detection", lambda ex: b"", ("The upload is too large", "at most 2.0 MB"), 413)


def test_an_over_limit_upload_sent_slowly_is_refused_before_the_client_has_sent_it_all(server: LiveServer) -> None:
    # 1,000 chunks of 16 KB are 16 MB, eight times the limit. The server answers once the body passes
    # the limit (plus 256 KB for the form) and closes the connection, so the client stops sending: it
    # gets the answer having sent about 2.25 MB / 16 KB = 144 chunks, plus what the sockets buffer.
    body = SlowBody(1000)
    assert_refused(body.send(server), OVER_LIMIT)
    assert body.sent < body.chunks
    assert httpx.get(f"{server.url}/api/v1/health").status_code == 200


def test_others_are_served_while_a_slow_upload_is_in_flight(server: LiveServer) -> None:
    release = threading.Event()
    body = SlowBody(400, hold=release)
    outcome: list[httpx.Response] = []
    sender = threading.Thread(target=lambda: outcome.append(body.send(server)))
    sender.start()
    try:
        assert body.started.wait(timeout=30)
        ex = example("famus-sv")
        assert httpx.get(f"{server.url}/", timeout=TIMEOUT).status_code == 200
        board = httpx.get(server.api(f"{ex.path}/leaderboard"), timeout=TIMEOUT)
        assert board.status_code == 200
        assert "entries" in board.json()
        accepted = upload(server, "famus-sv", ex.submission)
        assert accepted.status_code == 202, accepted.text
        assert wait_scored(server, accepted.json()["id"])["status"] == "scored"
        assert sender.is_alive() and body.sent == 1  # the slow upload was in flight all along
    finally:
        release.set()
        sender.join(timeout=120)
    assert_refused(outcome[0], OVER_LIMIT)


def test_the_hostile_batch_stores_nothing_and_peak_memory_stays_bounded(server: LiveServer) -> None:
    before = server.count_submissions()
    for case in HOSTILE:
        assert_refused(upload(server, case.scorer, case.build(example(case.scorer)), case.filename), case)
    assert_refused(SlowBody(1000, pause=0).send(server), OVER_LIMIT)
    assert server.count_submissions() == before  # a refused file is not stored and costs no quota
    grown = peak_rss_kb(server.pid) - server.warm_peak_kb
    assert grown < MEMORY_BOUND_KB, f"the server's peak memory grew by {grown // 1024} MB"


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("competitions/svident%00", "path.competition: contains a NUL character"),
        ("competitions/svident?all=%00", "query.all: contains a NUL character"),
        (f"submissions/{2**40}", "less than or equal to 2147483647"),
        ("submissions/-1", "greater than or equal to 1"),
    ],
    ids=["NUL in the path", "NUL in the query", "huge id", "negative id"],
)
def test_hostile_path_is_refused_with_a_message(server: LiveServer, path: str, fragment: str) -> None:
    response = httpx.get(server.api(path), headers=server.auth(), timeout=TIMEOUT)
    assert response.status_code == 422, response.text
    assert fragment in message_of(response)
