"""A participant's way through the pages in a real browser (Debian's chromium driven by Playwright)
against a real ``podium serve`` process: register, create a team, submit a file through the form,
watch the status turn to scored, find the row on the public leaderboard, export it as CSV.

The scorer is the real ``famus-sv`` (the server process has only the registered scorers). Gold: four
instances, i1 and i2 valid sources. The file labels i1 and i3 valid: i1 is a true positive, i3 a
false positive, i2 a false negative, so precision = recall = F1 = 1/2 and accuracy = 2/4 = 50.00 %.
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.storage.db import Database
from app.storage.migrate import upgrade
from leaderboard.exports import UNCERTAINTY_FIELDS
from tests.app.builders import PASSWORD, bundle_file, make_competition, make_user, phase_spec

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
GOLD = [
    {"instance_id": "i1", "valid_source": True, "frame": "Arriving"},
    {"instance_id": "i2", "valid_source": True, "frame": "Arriving"},
    {"instance_id": "i3", "valid_source": False, "frame": "Giving"},
    {"instance_id": "i4", "valid_source": False, "frame": "Giving"},
]
RUN = {"i1": 1, "i2": 0, "i3": 1, "i4": 0}
TEAM = "Team <b>Ada</b>"

pytestmark = [
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


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """A ``podium serve`` process on a fresh database with the competition ``comp``; yields its URL."""
    url = f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    database = Database(url)
    upgrade(database.engine)
    gold = "".join(json.dumps(line) + "\n" for line in GOLD).encode()
    with database.session() as session:
        make_user(session, "olga", organizer=True)
        make_competition(
            session, organizers=("olga",), scorer="famus-sv", phases=(phase_spec(gold=bundle_file("gold.jsonl", gold)),)
        )
        session.commit()
    database.dispose()

    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PODIUM_")},
        "PODIUM_DATABASE_URL": url,
        "PODIUM_SECRET_KEY": "browser-test-secret-key-of-some-length",
        "PODIUM_WORKERS": "1",
    }
    log = (tmp_path / "server.log").open("wb")
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
                pytest.fail(f"podium serve exited with {process.returncode}:\n{(tmp_path / 'server.log').read_text()}")
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"podium serve did not answer within 60 s:\n{(tmp_path / 'server.log').read_text()}")
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


def test_register_submit_watch_it_scored_find_it_on_the_board_and_export(server: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    run = tmp_path / "predictions.json"
    run.write_text(json.dumps(RUN))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})  # a phone
            page.goto(f"{server}/register?next=/c/comp")
            page.fill("input[name=name]", "ada")
            page.fill("input[name=password]", PASSWORD)
            page.fill("input[name=password_again]", PASSWORD)
            page.get_by_role("button", name="Create the account").click()
            expect(page.locator(".flash")).to_contain_text("Welcome, ada")
            assert page.url == f"{server}/c/comp"

            page.get_by_role("link", name="Your team").click()
            page.fill("input[name=name]", TEAM)
            page.get_by_role("button", name="Create").click()
            expect(page.locator(".flash")).to_contain_text(f"You founded the team {TEAM}")

            page.goto(f"{server}/c/comp/labels/dev/submit")
            page.set_input_files("input[name=file]", str(run))
            page.fill("input[name=method_name]", "half right")
            page.get_by_role("button", name="Submit", exact=True).click()
            page.wait_for_timeout(3000)
            page.wait_for_url(f"{server}/submissions/*")
            # The page polls the status and reloads once scoring is done.
            expect(page.locator("[data-poll] .status")).to_have_text("scored", timeout=30_000)
            expect(page.locator("table").first).to_contain_text("50.00")

            visitor = browser.new_page()  # no login: the leaderboard is public
            visitor.goto(f"{server}/c/comp/labels/dev")
            row = visitor.locator("table.board tbody tr", has_text="half right")
            expect(row).to_contain_text(TEAM)  # the markup in the name is text, not bold
            expect(row.locator("td.primary")).to_have_text("50.00")
            assert visitor.locator("table.board b").count() == 0
            with visitor.expect_download() as download:
                visitor.click("text=CSV >> nth=0")
            rows = list(csv.reader(download.value.path().read_text(encoding="utf-8").splitlines()))
        finally:
            browser.close()
    assert rows[0][:5] == ["rank", "team", "system", "submitted_at", "baseline"]
    assert rows[1][:3] == ["1", TEAM, "half right"]
    exported = dict(zip(rows[0][5:], rows[1][5:], strict=True))
    assert {name: exported.pop(name) for name in ("accuracy", "precision", "recall", "f1")} == {
        "accuracy": "0.5",
        "precision": "0.5",
        "recall": "0.5",
        "f1": "0.5",
    }
    # Then the primary metric's interval over the 4 instances, flagged as resting on few units.
    assert set(exported) == set(UNCERTAINTY_FIELDS)
    assert (exported["interval_units"], exported["interval_few_units"], exported["tied_group"]) == ("4", "true", "1")
