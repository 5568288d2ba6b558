"""Page tests in a real browser: Debian's chromium driven by Playwright against a real ``podium serve``
process on a fresh SQLite database that a test fills first (``live_server``), and the pages it opens
(``open_browser``)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from sqlalchemy.orm import Session

from app.storage.db import Database
from app.storage.migrate import upgrade
from tests.app.builders import PASSWORD
from tests.conftest import HTTP, environment_without_settings

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: Marks of a browser test module: slow, and skipped where Debian's chromium is not installed.
BROWSER_TEST = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
    ),
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def podium_command() -> list[str]:
    """``podium`` from this environment (the module itself where the script is not installed)."""
    script = Path(sys.executable).with_name("podium")
    return [str(script)] if script.exists() else [sys.executable, "-m", "app.cli"]


@contextmanager
def live_server(tmp_path: Path, seed: Callable[[Session], None], **settings: str) -> Iterator[str]:
    """A ``podium serve`` process on a fresh database that ``seed`` filled (and committed); yields its URL.
    ``settings`` are extra ``PODIUM_*`` variables (``WORKERS="2"``)."""
    url = f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    database = Database(url)
    upgrade(database.engine)
    with database.session() as session:
        seed(session)
        session.commit()
    database.dispose()
    with serving(url, tmp_path / "server.log", **settings) as base:
        yield base


@contextmanager
def serving(url: str, log_path: Path, **settings: str) -> Iterator[str]:
    """A ``podium serve`` process on the migrated database at ``url``; yields its URL."""
    port = free_port()
    env = {
        **environment_without_settings(),
        "PODIUM_DATABASE_URL": url,
        "PODIUM_SECRET_KEY": "browser-test-secret-key-of-some-length",
        "PODIUM_WORKERS": "1",
        **{f"PODIUM_{key}": value for key, value in settings.items()},
    }
    log = log_path.open("wb")
    process = subprocess.Popen(
        [*podium_command(), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"podium serve exited with {process.returncode}:\n{log_path.read_text()}")
            try:
                if HTTP.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"podium serve did not answer within 60 s:\n{log_path.read_text()}")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@contextmanager
def open_browser() -> Iterator[Browser]:
    """Debian's chromium, headless, closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def log_in(browser: Browser, server: str, name: str, *, width: int = 1400, height: int = 900) -> Page:
    """A new page, logged in as ``name`` (password ``PASSWORD``), at the home page."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(f"{server}/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name="Log in", exact=True).click()
    page.wait_for_url(f"{server}/")
    return page


def upload(url: str, token: str, ref: tuple[str, str, str], data: bytes, method: str) -> int:
    """``data`` uploaded to the phase ``ref`` through the API with ``token``; returns the submission's id."""
    answer = httpx.post(
        "{}/api/v1/competitions/{}/tasks/{}/phases/{}/submissions".format(url, *ref),
        headers={"Authorization": f"Bearer {token}"},
        files={"file": (method or "run", data)},
        data={"method_name": method},
        timeout=30,
    )
    assert answer.status_code in (200, 201, 202), answer.text
    return int(answer.json()["id"])


def wait_scored(url: str, token: str, submission_id: int) -> None:
    """Until the submission has left ``queued`` and ``running``: it must be scored (within 2 minutes)."""
    deadline = time.monotonic() + 120
    while True:
        found = HTTP.get(
            f"{url}/api/v1/submissions/{submission_id}", headers={"Authorization": f"Bearer {token}"}, timeout=30
        ).json()
        if found["status"] not in ("queued", "running"):
            assert found["status"] == "scored", found
            return
        assert time.monotonic() < deadline, f"submission {submission_id} was not scored within 2 minutes"
        time.sleep(0.2)
