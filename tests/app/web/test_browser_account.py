"""The account in a real browser (Debian's chromium, Playwright) against a real ``podium serve``: a
user changes the password on the account page, a site admin's one-time reset link sets another in a
second browser, and that ends the first browser's session.

The server is ``tests/app/web/browser.py``'s ``live_server`` holding the user ``olga`` (the tests'
password), on a SQLite database in the test's folder, which ``podium user reset-link`` opens too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from sqlalchemy.orm import Session

from tests.app.builders import PASSWORD, make_user
from tests.app.web.browser import BROWSER_TEST, live_server, log_in, open_browser, podium_command
from tests.conftest import environment_without_settings

pytestmark = BROWSER_TEST

CHANGED = "changed in the browser"
RESET = "set through the link"


def reset_link(tmp_path: Path, base: str, name: str) -> str:
    env = {
        **environment_without_settings(),
        "PODIUM_DATABASE_URL": f"sqlite:///{tmp_path / 'podium.sqlite3'}",
    }
    made = subprocess.run(
        [*podium_command(), "user", "reset-link", name, "--url", base],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return made.stdout.strip()


def seed(session: Session) -> None:
    make_user(session, "olga")


def test_change_the_password_then_reset_it_with_a_link(tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with live_server(tmp_path, seed) as server, open_browser() as browser:
        page = log_in(browser, server, "olga")
        page.get_by_role("link", name="olga").click()  # the name in the top bar leads to the account
        assert page.url == f"{server}/account"

        page.get_by_label("Current password").fill("not the password")
        page.get_by_label("New password", exact=True).fill(CHANGED)
        page.get_by_label("New password again").fill(CHANGED)
        page.get_by_role("button", name="Change password").click()
        expect(page.get_by_role("alert")).to_contain_text("wrong user name or password")

        page.get_by_label("Current password").fill(PASSWORD)
        page.get_by_label("New password", exact=True).fill(CHANGED)
        page.get_by_label("New password again").fill(CHANGED)
        page.get_by_role("button", name="Change password").click()
        expect(page.locator(".flash")).to_contain_text("Your password was changed")
        page.reload()
        expect(page.locator("header .who")).to_have_text("olga")  # this browser stays logged in

        link = reset_link(tmp_path, server, "olga")
        assert link.startswith(f"{server}/reset/")
        other = browser.new_context().new_page()  # someone else's browser, logged out
        other.goto(link)
        expect(other.get_by_role("heading", level=1)).to_have_text("Set a new password for olga")
        other.get_by_label("New password", exact=True).fill(RESET)
        other.get_by_label("New password again").fill(RESET)
        other.get_by_role("button", name="Set password").click()
        expect(other.locator(".flash")).to_contain_text("The password of olga was set")
        assert other.url.startswith(f"{server}/login")
        other.fill("input[name=name]", "olga")
        other.fill("input[name=password]", RESET)
        other.get_by_role("button", name="Log in", exact=True).click()
        expect(other.locator("header .who")).to_have_text("olga")

        other.goto(link)  # one use
        expect(other.get_by_role("heading", level=1)).to_have_text("Not found")

        page.goto(f"{server}/account")  # the first browser's session ended with the reset
        assert page.url.startswith(f"{server}/login")
