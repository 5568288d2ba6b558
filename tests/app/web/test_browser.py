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
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from leaderboard.exports import UNCERTAINTY_FIELDS
from tests.app.builders import PASSWORD, bundle_file, make_competition, make_user, phase_spec
from tests.app.web.browser import BROWSER_TEST, live_server, open_browser

GOLD = [
    {"instance_id": "i1", "valid_source": True, "frame": "Arriving"},
    {"instance_id": "i2", "valid_source": True, "frame": "Arriving"},
    {"instance_id": "i3", "valid_source": False, "frame": "Giving"},
    {"instance_id": "i4", "valid_source": False, "frame": "Giving"},
]
RUN = {"i1": 1, "i2": 0, "i3": 1, "i4": 0}
TEAM = "Team <b>Ada</b>"

pytestmark = BROWSER_TEST


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """A ``podium serve`` process with the competition ``comp`` (famus-sv); yields its URL."""
    gold = "".join(json.dumps(line) + "\n" for line in GOLD).encode()

    def seed(session: Session) -> None:
        make_user(session, "olga", organizer=True)
        make_competition(
            session, organizers=("olga",), scorer="famus-sv", phases=(phase_spec(gold=bundle_file("gold.jsonl", gold)),)
        )

    with live_server(tmp_path, seed) as url:
        yield url


def test_register_submit_watch_it_scored_find_it_on_the_board_and_export(server: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    run = tmp_path / "predictions.json"
    run.write_text(json.dumps(RUN))
    with open_browser() as browser:
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
    # Four instances are too few for a 95% interval: the export says what it is instead.
    assert (exported["interval_too_few_units"], exported["interval_reliable"]) == ("true", "false")
    assert exported["interval_label"].startswith("rough: from 4 units")
