"""A real ``podium serve`` for the security tests that attack over HTTP: its own process on the test
database (SQLite, or PostgreSQL with ``PODIUM_TEST_DATABASE_URL``), holding the example competitions
and demo accounts (``podium demo``), with the settings a test module gives."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from app.storage.db import Database
from tests.conftest import HTTP, ROOT, environment_without_settings
from tests.security.seed_examples import demo_competitions, example, seed_scorers

#: A bound on every exchange, so that a server that never answers fails the test instead of hanging it.
TIMEOUT = httpx.Timeout(60.0)


@dataclass(frozen=True)
class LiveServer:
    url: str
    pid: int
    #: The demo participant's API token.
    token: str
    #: The demo organizer's API token.
    organizer_token: str = ""
    #: Peak resident memory (VmHWM, KB) once the server had started, scored a file and served a board.
    warm_peak_kb: int = 0

    def api(self, path: str) -> str:
        return f"{self.url}/api/v1/{path}"

    def submissions(self, scorer: str) -> str:
        return self.api(f"{example(scorer).path}/submissions")

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def count_submissions(self) -> int:
        """The participant's submissions over every example phase."""
        return sum(
            len(HTTP.get(self.submissions(name), headers=self.auth()).json()["submissions"]) for name in seed_scorers()
        )


def peak_rss_kb(pid: int) -> int:
    """The process's peak resident set size in KB, from ``/proc`` (``VmHWM``)."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmHWM:\s+(\d+) kB$", status, re.MULTILINE)
    assert match, f"no VmHWM in /proc/{pid}/status"
    return int(match.group(1))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if HTTP.get(f"{url}/api/v1/health", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"podium serve did not start:\n{log.read_text()}")
        time.sleep(0.2)


def wait_scored(server: LiveServer, submission_id: int) -> dict[str, Any]:
    """The submission once it has left ``queued`` and ``running`` (or after a minute)."""
    deadline = time.monotonic() + 60
    while True:
        found = HTTP.get(server.api(f"submissions/{submission_id}"), headers=server.auth()).json()
        if found["status"] not in ("queued", "running") or time.monotonic() > deadline:
            return dict(found)
        time.sleep(0.1)


def upload(server: LiveServer, scorer: str, data: bytes, filename: str = "submission.json") -> httpx.Response:
    """Send ``data`` to the example phase of ``scorer`` as the demo participant."""
    return httpx.post(
        server.submissions(scorer), headers=server.auth(), files={"file": (filename, data)}, timeout=TIMEOUT
    )


@contextmanager
def serve(database: Database, log_dir: Path, **settings: str) -> Iterator[LiveServer]:
    """``podium serve`` with one worker on ``database`` holding the example competitions; ``settings`` are
    ``PODIUM_...`` variables (``MAX_UPLOAD_BYTES="2000000"``)."""
    env = environment_without_settings()
    env.update(PODIUM_DATABASE_URL=database.url, PODIUM_WORKERS="1", PODIUM_SECRET_KEY="live-server-tests-" * 3)
    env.update({f"PODIUM_{key}": value for key, value in settings.items()})
    log = log_dir / "server.log"
    port = free_port()
    with demo_competitions(database) as tokens:
        with log.open("wb") as output:
            process = subprocess.Popen(
                [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
                cwd=ROOT,
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_healthy(url, process, log)
            yield LiveServer(url, process.pid, tokens["participant"], tokens["organizer"])
        finally:
            process.terminate()
            process.wait(timeout=30)
