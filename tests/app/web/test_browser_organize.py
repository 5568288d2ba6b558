"""An organizer's everyday work through the pages in a real browser (Debian's chromium, Playwright)
against a real ``podium serve``: reaching "Organize" from the competition page, editing a phase with
its errors shown in place and its log, answering participation requests (and what their senders
see), putting a competition online by uploading its bundle (its problems shown in place), confirming
before revealing, rescoring everything or cancelling a baseline run, and reading a run's log in its
own block.

One server for the module; each test works on its own competition so that none depends on another.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from sqlalchemy.orm import Session

from app.services.accounts import teams
from app.services.accounts.users import find_user
from app.services.competitions import participation
from app.services.competitions.catalog import get_competition, get_phase
from app.storage.blobs import put_blob
from app.storage.models import BaselineRun, RunStatus, Submission, SubmissionStatus, User
from app.storage.types import utcnow
from tests.app.builders import bundle_file, make_competition, make_user, phase_spec
from tests.app.web.browser import BROWSER_TEST, live_server, log_in, open_browser

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = BROWSER_TEST

GOLD = [
    {"instance_id": "i1", "valid_source": True, "frame": "Arriving"},
    {"instance_id": "i2", "valid_source": False, "frame": "Giving"},
]
#: 300 lines, some far wider than any screen: a log that must scroll both ways in its block.
LONG_LOG = "\n".join(f"step {i:03d} " + ("loss=0.25 " * (40 if i % 50 == 0 else 3)) for i in range(300))


def _competition(session: Session, slug: str, participation_rule: str = "open", **phase: object) -> None:
    gold = bundle_file("gold.jsonl", "".join(json.dumps(line) + "\n" for line in GOLD).encode())
    make_competition(
        session,
        slug,
        organizers=("olga",),
        scorer="famus-sv",
        participation=participation_rule,
        phases=(phase_spec(gold=gold, **phase),),
    )


def _seed(session: Session) -> None:
    make_user(session, "olga", organizer=True)
    users = {name: make_user(session, name) for name in ("ada", "bob", "carl")}
    _competition(session, "edits")
    _competition(session, "people", "approval")
    people = get_competition(session, "people")
    for name in ("ada", "bob", "carl"):
        participation.request_participation(session, users[name], people)
    participation.approve_participant(session, _olga(session), people, "bob")
    _competition(session, "secret", visibility="hidden")
    _crowded(session)
    _competition(session, "runs")
    phase = get_phase(session, "runs", "labels", "dev")
    # A run another worker holds (its lease far ahead, so no sweeper takes it), and one that failed.
    session.add(
        BaselineRun(
            phase_id=phase.id,
            baseline="tfidf",
            baseline_version="1",
            status=RunStatus.RUNNING,
            started_at=utcnow(),
            lease_expires_at=utcnow() + timedelta(days=1),
            worker="elsewhere:1/1",
        )
    )
    session.add(
        BaselineRun(
            phase_id=phase.id,
            baseline="tfidf",
            baseline_version="1",
            status=RunStatus.FAILED,
            log_tail=LONG_LOG,
            error="RuntimeError: out of patience",
        )
    )


def _crowded(session: Session) -> None:
    """A phase whose submission has a long team name, a long method name and a long platform error."""
    _competition(session, "crowded")
    ada = find_user(session, "ada")
    assert ada is not None
    team = teams.create_team(session, ada, get_competition(session, "crowded"), "The " + "very " * 14 + "long team")
    data = json.dumps({"i1": 1, "i2": 0}).encode()
    blob = put_blob(session, data)
    traceback = "\n".join(f'  File "/srv/podium/scorers/deep/module_{i}.py", line {i}, in f{i}' for i in range(30))
    session.add(
        Submission(
            phase_id=get_phase(session, "crowded", "labels", "dev").id,
            team_id=team.id,
            user_id=ada.id,
            blob_id=blob.id,
            sha256=blob.sha256,
            size=len(data),
            original_name="run.json",
            method_name="an ensemble of " + "seven " * 29 + "systems",  # 196 characters: the column holds 200
            status=SubmissionStatus.FAILED,
            organizer_message="Traceback (most recent call last):\n" + traceback + "\nRuntimeError: " + "x" * 300,
            participant_message="a problem on our side",
        )
    )


def _olga(session: Session) -> User:
    olga = find_user(session, "olga")
    assert olga is not None
    return olga


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with live_server(tmp_path_factory.mktemp("organize"), _seed) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with open_browser() as opened:
        yield opened


def _organize_phase(browser: Browser, server: str, slug: str, **size: int) -> Page:
    """Olga's page that organizes phase dev of competition ``slug``, open (``size``: log_in's width, height)."""
    page = log_in(browser, server, "olga", **size)
    page.goto(f"{server}/c/{slug}/labels/dev/organize")
    return page


def _asks_first_then_goes_back(page: Page, button: str, question: str | re.Pattern[str], detail: str) -> None:
    """``button`` on the Organize page open in ``page`` asks first: a page whose heading is ``question``
    (a pattern: found in it) and whose notice says ``detail``; its "No, go back" returns to the Organize
    page, where nothing happened."""
    from playwright.sync_api import expect

    organize = page.url
    page.get_by_role("button", name=button).click()
    expect(page.locator("h1")).to_have_text(question)
    expect(page.locator(".confirm")).to_contain_text(detail)
    page.get_by_role("link", name="No, go back").click()
    assert page.url == organize


def test_organize_is_reached_from_the_competition_page_and_a_phase_is_edited(server: str, browser: Browser) -> None:
    from playwright.sync_api import expect

    page = log_in(browser, server, "olga")
    page.goto(f"{server}/c/edits")
    expect(page.get_by_role("button", name="Ask to take part")).to_have_count(0)
    page.get_by_role("link", name="Organize", exact=True).first.click()
    assert page.url == f"{server}/c/edits/organize"
    page.get_by_role("link", name="Labels › Phase dev").click()
    assert page.url == f"{server}/c/edits/labels/dev/organize"

    form = page.locator("form.edit-phase")
    form.locator("input[name=daily_limit]").fill("lots")
    form.locator("input[name=ends_at]").fill("2031-06-30T12:00")
    form.get_by_role("button", name="Save the phase").click()
    alert = page.locator(".flash.error")
    expect(alert).to_contain_text("the phase was not changed")
    expect(alert).to_contain_text("daily_limit")
    expect(form.locator("input[name=daily_limit]")).to_have_value("lots")  # kept for correcting
    expect(page.locator("details.changes summary")).to_have_text("Changes (0)")

    form.locator("input[name=daily_limit]").fill("3")
    form.locator("select[name=visibility]").select_option("hidden")
    form.get_by_role("button", name="Save the phase").click()
    expect(page.locator(".flash").first).to_contain_text("changed: ends_at, daily_limit, visibility")
    log = page.locator("details.changes tbody tr")
    expect(log).to_have_count(3)
    expect(log.filter(has_text="daily_limit")).to_contain_text("olga")
    expect(log.filter(has_text="ends_at")).to_contain_text("2031-06-30T12:00Z")

    page.goto(f"{server}/c/edits")
    facts = page.locator("article.phase .facts")
    expect(facts).to_contain_text("up to 3 a day")
    expect(facts).to_contain_text("2031-06-30 12:00 UTC")
    expect(page.locator("article.phase")).to_contain_text("results hidden")
    page.close()


def test_participation_requests_are_answered_and_their_senders_see_where_they_stand(
    server: str, browser: Browser
) -> None:
    from playwright.sync_api import expect

    ada = log_in(browser, server, "ada")
    ada.goto(f"{server}/c/people")
    expect(ada.locator(".participation")).to_contain_text("Your request to take part is pending")
    expect(ada.get_by_role("button", name="Ask to take part")).to_have_count(0)
    ada.goto(f"{server}/c/people/organize")
    expect(ada.locator("h1")).to_have_text("Not allowed")

    olga = log_in(browser, server, "olga")
    olga.goto(f"{server}/c/people")
    expect(olga.get_by_role("button", name="Ask to take part")).to_have_count(0)
    olga.get_by_role("link", name="Organize", exact=True).first.click()
    rows = olga.locator("table.participants tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.filter(has_text="ada")).to_contain_text("pending")
    expect(rows.filter(has_text="bob")).to_contain_text("approved")
    olga.get_by_role("button", name="Approve ada").click()
    expect(olga.locator(".flash").first).to_contain_text("ada may take part now")
    olga.get_by_role("button", name="Refuse carl").click()
    olga.get_by_role("button", name="Remove bob").click()
    expect(olga.locator(".flash").first).to_contain_text("bob no longer takes part")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="ada")).to_contain_text("approved")
    expect(rows.filter(has_text="carl")).to_contain_text("refused")

    ada.goto(f"{server}/c/people")
    expect(ada.locator(".participation")).to_contain_text("You take part")
    ada.goto(f"{server}/c/people/labels/dev/submit")
    expect(ada.locator("input[name=file]")).to_have_count(1)
    carl = log_in(browser, server, "carl")
    carl.goto(f"{server}/c/people")
    expect(carl.locator(".participation")).to_contain_text("was refused by the organizers")
    bob = log_in(browser, server, "bob")  # removed: back to asking
    bob.goto(f"{server}/c/people")
    expect(bob.get_by_role("button", name="Ask to take part")).to_have_count(1)
    bob.get_by_role("button", name="Ask to take part").click()
    expect(bob.locator(".participation")).to_contain_text("pending")
    for page in (ada, olga, carl, bob):
        page.close()


def test_revealing_and_rescoring_everything_ask_first(server: str, browser: Browser) -> None:
    from playwright.sync_api import expect

    page = _organize_phase(browser, server, "secret")
    organize = page.url
    _asks_first_then_goes_back(page, "Reveal the results", "Reveal the results of Phase dev?", "cannot be undone")
    expect(page.locator(".facts")).to_contain_text("hidden from everyone but the organizers")  # nothing happened

    page.get_by_role("button", name="Score every submission again").click()
    expect(page.locator("h1")).to_have_text("Score every submission of Phase dev again?")
    page.get_by_role("button", name="Yes, score everything again").click()
    expect(page.locator(".flash").first).to_contain_text("0 submission(s) queued for scoring again")

    page.get_by_role("button", name="Reveal the results").click()
    page.get_by_role("button", name="Yes, reveal the results").click()
    expect(page.locator(".flash").first).to_contain_text("The phase's results are public now")
    page.goto(organize)
    expect(page.locator(".facts")).to_contain_text("revealed")
    page.close()


def test_cancelling_a_baseline_run_asks_first_and_its_log_has_a_wide_block(server: str, browser: Browser) -> None:
    from playwright.sync_api import expect

    page = _organize_phase(browser, server, "runs")
    _asks_first_then_goes_back(page, "Cancel", re.compile("Cancel baseline run"), "stops at its next check")
    expect(page.get_by_role("button", name="Cancel")).to_have_count(1)  # still running, not stopping
    page.get_by_role("button", name="Cancel").click()
    page.get_by_role("button", name="Yes, cancel the run").click()
    expect(page.locator(".flash").first).to_contain_text("stops at its next check")
    expect(page.get_by_role("button", name="Cancel")).to_have_count(0)

    page.get_by_role("link", name="error and log").click()
    log = page.get_by_role("region", name="Log of baseline run 2")
    expect(log).to_contain_text("step 299")
    shape = log.evaluate(
        """el => ({width: el.getBoundingClientRect().width, font: getComputedStyle(el).fontFamily,
                 tall: el.scrollHeight > el.clientHeight, wide: el.scrollWidth > el.clientWidth,
                 overflow: getComputedStyle(el).overflowY, inTable: el.closest('table') !== null})"""
    )
    assert shape["width"] > 900, shape  # the page's width at 1400 px, not a table cell's
    assert "mono" in shape["font"], shape
    assert shape["tall"] and shape["wide"] and shape["overflow"] == "auto", shape
    assert not shape["inTable"], shape
    expect(page.get_by_role("region", name="Error of baseline run 2")).to_contain_text("out of patience")
    page.close()


def _bundle(tmp_path: Path, name: str, phase: dict[str, object]) -> Path:
    """A bundle zip of a famus-sv competition ``fresh`` with the given phase (its gold in the zip)."""
    document = {
        "slug": "fresh",
        "title": "Fresh task",
        "tasks": [{"slug": "sv", "title": "Source validation", "scorer": "famus-sv", "phases": [phase]}],
    }
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("fresh/competition.yaml", yaml.safe_dump(document))
        archive.writestr("fresh/gold.jsonl", "".join(json.dumps(line) + "\n" for line in GOLD))
    return path


def test_a_competition_is_put_online_by_uploading_its_bundle(server: str, browser: Browser, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    good_phase = {"slug": "dev", "title": "Dev", "gold": {"path": "gold.jsonl"}}
    bad = _bundle(tmp_path, "bad.zip", {**good_phase, "daily_limit": 0, "closes": "2030-01-01T00:00Z"})
    good = _bundle(tmp_path, "good.zip", good_phase)

    page = log_in(browser, server, "olga")
    page.get_by_role("link", name="New competition").click()
    page.set_input_files("input[name=bundle]", str(bad))
    page.get_by_role("button", name="Put the competition online").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("The bundle was refused: 2 problems.")
    problems = alert.locator("ul.problems li")
    expect(problems).to_have_count(2)
    expect(problems.filter(has_text="tasks[0].phases[0].daily_limit")).to_contain_text("at least 1")
    expect(problems.filter(has_text="tasks[0].phases[0].closes")).to_contain_text("unknown key")

    page.set_input_files("input[name=bundle]", str(good))
    page.get_by_role("button", name="Put the competition online").click()
    page.wait_for_url(f"{server}/c/fresh")
    expect(page.locator(".flash").first).to_contain_text("The competition Fresh task is online")
    expect(page.get_by_role("link", name="Organize", exact=True).first).to_be_visible()

    ada = log_in(browser, server, "ada")
    expect(ada.get_by_role("link", name="New competition")).to_have_count(0)
    page.close()
    ada.close()


def test_the_log_stays_inside_the_screen_on_a_phone(server: str, browser: Browser, tmp_path: Path) -> None:
    page = _organize_phase(browser, server, "runs", width=400, height=800)
    log = page.get_by_role("region", name="Log of baseline run 2")
    box = log.bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= 400, box  # it scrolls inside, the page does not
    assert page.evaluate("document.documentElement.scrollWidth") <= 400
    page.close()


@pytest.mark.parametrize("width", [1400, 400])
def test_the_submissions_actions_stay_in_sight(server: str, browser: Browser, width: int) -> None:
    from playwright.sync_api import expect

    page = _organize_phase(browser, server, "crowded", width=width)
    row = page.locator("table.organizer-submissions tbody tr")
    expect(row).to_have_count(1)
    row.locator("details summary").click()  # the long error, open
    button = row.get_by_role("button", name="Rescore")
    box, frame = button.bounding_box(), page.get_by_role("region", name="Submissions").bounding_box()
    assert box is not None and frame is not None
    # Without scrolling the table or the page sideways, the button is whole inside the table's box.
    assert frame["x"] <= box["x"] and box["x"] + box["width"] <= frame["x"] + frame["width"] <= width, (box, frame)
    if width == 1400:  # the whole table fits: nothing hides behind a sideways scroll
        assert page.get_by_role("region", name="Submissions").evaluate("el => el.scrollWidth <= el.clientWidth")
    page.close()
