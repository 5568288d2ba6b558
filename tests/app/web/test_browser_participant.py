"""A participant's first minutes in a real browser: the phase page's format and sample submission, the sample
uploaded through the form and scored, the team managed from its page (rename, leave, remove a member), and
"My submissions" from the top navigation.

The scorer is the real ``famus-sv``: four instances, i1 and i2 valid sources. The sample labels every
instance 0, so accuracy is 2/4 and F1 (of the valid class) 0.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sqlalchemy.orm import Session

from tests.app.builders import bundle_file, make_competition, make_user, phase_spec
from tests.app.web.browser import BROWSER_TEST, live_server, log_in, open_browser

pytestmark = BROWSER_TEST
GOLD = [
    {"instance_id": "i1", "valid_source": True, "frame": "Arriving"},
    {"instance_id": "i2", "valid_source": True, "frame": "Arriving"},
    {"instance_id": "i3", "valid_source": False, "frame": "Giving"},
    {"instance_id": "i4", "valid_source": False, "frame": "Giving"},
]


def seed(session: Session) -> None:
    for name in ("olga", "ada", "bob"):
        make_user(session, name, organizer=name == "olga")
    gold = "".join(json.dumps(line) + "\n" for line in GOLD).encode()
    phases = (phase_spec(gold=bundle_file("gold.jsonl", gold)),)
    make_competition(session, organizers=("olga",), scorer="famus-sv", phases=phases)


def test_team_sample_submission_and_my_submissions_from_the_pages(tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with live_server(tmp_path, seed) as server, open_browser() as browser:
        ada, bob = log_in(browser, server, "ada"), log_in(browser, server, "bob", width=400, height=800)

        # The team: ada founds it, bob joins, leaves, joins again, ada renames it and removes bob.
        ada.goto(f"{server}/c/comp/team")
        ada.fill("input[name=name]", "Owls")
        ada.get_by_role("button", name="Create").click()
        code = ada.locator("code.invite").inner_text()
        bob.goto(f"{server}/c/comp/team")
        bob.fill("input[name=invite_code]", code)
        bob.get_by_role("button", name="Join").click()
        expect(bob.locator(".flash")).to_contain_text("You joined the team Owls")
        expect(bob.get_by_role("button", name="Rename")).to_have_count(0)  # the founder's, not his
        bob.get_by_role("button", name="Leave Owls").click()
        expect(bob.locator(".flash")).to_contain_text("You left the team Owls")
        bob.fill("input[name=invite_code]", code)
        bob.get_by_role("button", name="Join").click()
        ada.reload()
        expect(ada.locator("ul.facts")).to_contain_text("Members: ada, bob (founded by ada")
        ada.fill("form[action$='/rename'] input[name=name]", "Night Owls")
        ada.get_by_role("button", name="Rename").click()
        expect(ada.locator(".flash")).to_contain_text("Your team is now called Night Owls")
        ada.select_option("select[name=member]", "bob")
        ada.get_by_role("button", name="Remove").click()
        expect(ada.locator(".flash")).to_contain_text("bob is no longer in the team Night Owls")
        assert ada.locator("code.invite").inner_text() != code
        bob.reload()
        expect(bob.locator("main")).to_contain_text("You are not in a team of this competition")

        # The phase page says the format in words and offers the sample; it is accepted and scored.
        ada.goto(f"{server}/c/comp/labels/dev")
        expect(ada.locator("ul.facts")).to_contain_text("Submission format: JSON object {instance_id: 0 or 1}")
        with ada.expect_download() as download:
            ada.get_by_role("link", name="Sample submission").click()
        sample = Path(download.value.path())
        assert json.loads(sample.read_text()) == {"i1": 0, "i2": 0, "i3": 0, "i4": 0}
        ada.goto(f"{server}/c/comp/labels/dev/submit")
        ada.set_input_files("input[name=file]", str(sample))
        ada.get_by_role("button", name="Submit", exact=True).click()
        ada.wait_for_url(re.compile(rf"{server}/submissions/\d+"))
        expect(ada.locator("[data-poll] .status")).to_have_text("scored", timeout=30_000)

        # My submissions, from the top navigation of any page.
        ada.goto(f"{server}/")
        ada.get_by_role("link", name="My submissions").click()
        row = ada.locator("table tbody tr")
        expect(row).to_have_count(1)
        expect(row).to_contain_text("Night Owls")
        expect(row).to_contain_text("f1 0.00")
        bob.goto(f"{server}/submissions")
        expect(bob.locator("main")).to_contain_text("No submissions yet")
