"""The pages readable everywhere, measured in a real browser (Debian's chromium through Playwright) against
a real ``podium serve`` whose board holds five teams' scored uploads (through the API):

- the leaderboard at 400 px keeps rank, team and the primary score inside its box (the rest scrolls, and
  a line says so); the organizers' submissions keep their actions in sight at 1400 px and at 400 px;
- the charts: a score axis within 0-100 %, tick labels a person reads, one upload drawn as a point, and
  no two labels overlapping (their boxes as the browser lays them out);
- a favicon, breadcrumbs with titles, a skip link;
- axe-core (tests/app/web/accessibility.py) on every page: no serious or critical violation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from sqlalchemy.orm import Session

from app.services.accounts import teams, users
from tests.app.builders import bundle_file, make_competition, make_user, phase_spec
from tests.app.web.accessibility import serious_violations
from tests.app.web.browser import BROWSER_TEST, live_server, log_in, open_browser, upload, wait_scored

pytestmark = BROWSER_TEST

INSTANCES = 24
GOLD = [{"instance_id": f"i{i:02d}", "valid_source": i % 2 == 0, "frame": "Arriving"} for i in range(INSTANCES)]
PERFECT = {row["instance_id"]: int(row["valid_source"]) for row in GOLD}
#: Per team: (how many instances it gets wrong, its method name).
TEAMS = {
    "ada": (0, "a perfect run"),
    "bob": (3, "fine-tuned with a long name that a phone cannot show whole: " + "a cross-encoder over BM25 " * 5),
    "cy": (6, "rules"),
    "dee": (9, "coin"),
    "eve": (12, "all wrong half"),
}
#: bob's team, named as real teams are (a lab, a university): the board shows it whole at 1400 px.
LONG_TEAM = "Computational Linguistics Lab of the University of Somewhere"
DEV = ("comp", "labels", "dev")
BOARD = "/c/comp/labels/dev"
SINGLE = "/c/comp/labels/single"


def run_with(wrong: int) -> bytes:
    return json.dumps({k: (1 - v if i < wrong else v) for i, (k, v) in enumerate(PERFECT.items())}).encode()


@dataclass(frozen=True)
class Site:
    url: str
    #: The submission ids of ``TEAMS``, in their order.
    submissions: tuple[int, ...]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    gold = bundle_file("gold.jsonl", "".join(json.dumps(row) + "\n" for row in GOLD).encode())
    tokens: dict[str, str] = {}

    def seed(session: Session) -> None:
        make_user(session, "olga", organizer=True)
        for name in TEAMS:
            tokens[name] = users.issue_token(session, make_user(session, name), "test")
        competition = make_competition(
            session,
            organizers=("olga",),
            scorer="famus-sv",
            phases=(phase_spec(gold=gold), phase_spec("single", gold=gold)),
        )
        bob = users.find_user(session, "bob")
        assert bob is not None
        teams.create_team(session, bob, competition, LONG_TEAM)

    with live_server(tmp_path_factory.mktemp("readable"), seed) as url:
        ids = tuple(
            upload(url, tokens[name], ("comp", "labels", "dev"), run_with(wrong), method)
            for name, (wrong, method) in TEAMS.items()
        )
        single = upload(url, tokens["ada"], ("comp", "labels", "single"), run_with(2), "alone")
        for name, submission_id in zip(TEAMS, ids, strict=True):
            wait_scored(url, tokens[name], submission_id)
        wait_scored(url, tokens["ada"], single)
        yield Site(url, ids)


# -- tables --------------------------------------------------------------------------------------------


def _inside(page, box_selector: str, cell_selector: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The cells (their text) under ``cell_selector`` that are not wholly in sight inside the box."""
    return list(
        page.evaluate(
            """([boxSel, cellSel]) => {
                const box = document.querySelector(boxSel).getBoundingClientRect();
                return [...document.querySelectorAll(cellSel)].filter(cell => {
                    const r = cell.getBoundingClientRect();
                    return r.width === 0 || r.left < box.left - 0.5 || r.right > box.right + 0.5;
                }).map(cell => cell.textContent.trim());
            }""",
            [box_selector, cell_selector],
        )
    )


def test_a_phone_sees_rank_team_and_primary_score_and_is_told_the_rest_scrolls(site: Site) -> None:
    with open_browser() as browser:
        page = browser.new_page(viewport={"width": 400, "height": 800})
        page.goto(site.url + BOARD)
        box = ".table-scroll:has(table.board)"
        rows = page.locator("table.board tbody tr")
        assert rows.count() == len(TEAMS)
        for column in ("td:nth-child(1)", "th.sticky", "td.primary"):
            assert _inside(page, box, f"table.board tbody tr > {column}") == [], column
        assert page.locator("table.board tbody td.primary").first.inner_text() == "100.00"
        # The table is wider than the phone: it scrolls inside its box, the page itself does not.
        sizes = page.locator(box).evaluate("b => [b.scrollWidth, b.clientWidth, document.documentElement.scrollWidth]")
        assert sizes[0] > sizes[1]
        assert sizes[2] <= 400
        hint = page.locator(".scroll-hint").first
        assert hint.is_visible() and "scroll" in hint.inner_text()
        hint_box, table_box = hint.bounding_box(), page.locator(box).bounding_box()
        assert hint_box and table_box and hint_box["y"] + hint_box["height"] <= table_box["y"] + 1, "the hint is above"

        # Scrolled to its end, the team column stays (sticky) and the last column comes into sight.
        page.locator(box).evaluate("b => { b.scrollLeft = b.scrollWidth; }")
        assert _inside(page, box, "table.board tbody tr > th.sticky") == []
        assert _inside(page, box, "table.board tbody tr > :last-child") == []

        # At 1400 px the per-frame columns still make the board wider than the page's column: the same
        # three stay in sight, and the hint shows exactly where a box overflows.
        wide = browser.new_page(viewport={"width": 1400, "height": 900})
        wide.goto(site.url + BOARD)
        for column in ("td:nth-child(1)", "th.sticky", "td.primary", "td.system"):
            assert _inside(wide, box, f"table.board tbody tr > {column}") == [], column
        assert _hints_match_overflow(wide)


def _hints_match_overflow(page) -> bool:  # type: ignore[no-untyped-def]
    """Whether every table box on the page has its hint shown exactly while it overflows."""
    states = page.evaluate(
        """() => [...document.querySelectorAll('.table-scroll')].map(b => [
            b.scrollWidth > b.clientWidth + 1,
            b.previousElementSibling.classList.contains('scroll-hint') && !b.previousElementSibling.hidden])"""
    )
    return bool(states) and all(overflows == hinted for overflows, hinted in states)


def _cut_columns(page, table: str, columns: tuple[str, ...]) -> list[str]:  # type: ignore[no-untyped-def]
    """The cells of the named columns (by the start of their heading) that a person does not see whole without
    scrolling: outside the table's scroll box or the window, or shortened (an ellipsis)."""
    return list(
        page.evaluate(
            """([tableSel, names]) => {
                const table = document.querySelector(tableSel);
                const heads = [...table.querySelectorAll('thead th')].map(h => h.textContent.trim());
                const box = table.closest('.table-scroll').getBoundingClientRect();
                const cut = [];
                for (const name of names) {
                    const at = heads.findIndex(h => h.startsWith(name));
                    if (at < 0) { cut.push(`${name}: no such column in ${heads}`); continue; }
                    for (const row of table.querySelectorAll('tbody tr')) {
                        const cell = row.children[at], r = cell.getBoundingClientRect();
                        if (r.width === 0 || r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.left < -0.5
                            || r.right > window.innerWidth + 0.5 || cell.scrollWidth > cell.clientWidth + 1) {
                            cut.push(`${name}: ${cell.textContent.trim()}`);
                        }
                    }
                }
                return cut;
            }""",
            [table, list(columns)],
        )
    )


def test_at_1400_px_what_a_participant_came_for_is_in_sight_without_scrolling(site: Site) -> None:
    """A laptop's width is used: the submissions' status and score, the board's team (named in full) and
    tied group are in sight as the page opens, long method names and many metric columns notwithstanding;
    the chart's legend lies inside the chart."""
    with open_browser() as browser:
        page = log_in(browser, site.url, "bob", width=1400)
        page.goto(site.url + "/submissions")
        assert _cut_columns(page, "main table", ("Status", "Score")) == []
        page.goto(site.url + BOARD + "/submissions")
        assert _cut_columns(page, "main table", ("Status", "f1")) == []
        page.goto(site.url + BOARD)
        assert page.locator("table.board th.sticky", has_text=LONG_TEAM).count() == 1
        assert _cut_columns(page, "table.board", ("#", "Team", "f1", "Tied group")) == []
        main = page.locator("main").bounding_box()
        assert main and main["width"] >= 1300, "the content uses the window's width"

        page.goto(site.url + BOARD + "/progress.svg")
        legend = page.evaluate(
            """() => {
                const chart = document.documentElement.getBoundingClientRect();
                const r = document.querySelector('g[id^="legend"]').getBoundingClientRect();
                return [r.left >= chart.left - 0.5, r.right <= chart.right + 0.5, r.top >= chart.top - 0.5,
                        r.bottom <= chart.bottom + 0.5, r.width > 0];
            }"""
        )
        assert legend == [True] * 5, "the legend lies inside the chart"


@pytest.mark.parametrize("width", [1400, 400])
def test_the_organizers_submissions_keep_their_actions_in_sight(site: Site, width: int) -> None:
    with open_browser() as browser:
        page = log_in(browser, site.url, "olga", width=width)
        page.goto(site.url + BOARD + "/organize")
        table = "table.organizer-submissions"
        box = f".table-scroll:has({table})"
        assert page.locator(f"{table} tbody tr").count() == len(TEAMS)
        assert _inside(page, box, f"{table} thead th:last-child") == []
        assert _inside(page, box, f"{table} tbody td:last-child button") == [], "every Rescore button in sight"
        # The action cells stay clickable: nothing is laid over them.
        button = page.locator(f"{table} tbody td:last-child button").first
        button.scroll_into_view_if_needed()
        button_box = button.bounding_box()
        assert button_box
        on_top = page.evaluate(
            "([x, y]) => document.elementFromPoint(x, y).closest('button')?.textContent",
            [button_box["x"] + button_box["width"] / 2, button_box["y"] + button_box["height"] / 2],
        )
        assert on_top == "Rescore"
        assert _hints_match_overflow(page)


# -- charts --------------------------------------------------------------------------------------------


def _texts(page) -> list[dict[str, float | str]]:  # type: ignore[no-untyped-def]
    """Every drawn text of the SVG document open in ``page``: its words and its box."""
    return list(
        page.evaluate(
            """() => [...document.querySelectorAll('text')].map(t => {
                const r = t.getBoundingClientRect();
                return {text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
            }).filter(t => t.text.trim() && t.right > t.left)"""
        )
    )


def _overlaps(texts: list[dict[str, float | str]]) -> list[tuple[str, str]]:
    found = []
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            if (
                float(a["left"]) < float(b["right"]) - 0.5
                and float(b["left"]) < float(a["right"]) - 0.5
                and float(a["top"]) < float(b["bottom"]) - 0.5
                and float(b["top"]) < float(a["bottom"]) - 0.5
            ):
                found.append((str(a["text"]), str(b["text"])))
    return found


def _percent_ticks(texts: list[dict[str, float | str]]) -> list[float]:
    return [float(str(t["text"]).rstrip("%")) for t in texts if re.fullmatch(r"-?\d+(\.\d+)?%", str(t["text"]))]


@pytest.mark.parametrize("chart", [BOARD + "/progress.svg", SINGLE + "/progress.svg", "documents"])
def test_charts_fit_their_data_and_no_labels_overlap(site: Site, chart: str) -> None:
    path = f"/submissions/{site.submissions[2]}/documents.svg" if chart == "documents" else chart
    with open_browser() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        answer = page.goto(site.url + path)
        assert answer and answer.ok
        texts = _texts(page)
        assert len(texts) >= 6
        assert _overlaps(texts) == []
        ticks = _percent_ticks(texts)
        assert len(ticks) >= 3, texts
        assert min(ticks) >= 0 and max(ticks) <= 100, "a score axis within 0-100 %"
        if chart != "documents":
            # The uploads are seconds apart: times of day (not seconds, not years), the day said once (both
            # days where the axis runs across midnight).
            ticks_x = page.evaluate(
                """() => [...document.querySelectorAll('g[id^="xtick"] text')].map(t => t.textContent)"""
            )
            assert len(ticks_x) >= 3 and all(re.fullmatch(r"\d{2}:\d{2}", tick) for tick in ticks_x), ticks_x
            days = r"Upload time \(UTC\), \d{4}-\d{2}-\d{2}( to \d{4}-\d{2}-\d{2})?"
            assert any(re.fullmatch(days, str(t["text"])) for t in texts)
            # Every upload that improved a score is a point inside the plot (a score of 100 % on its top
            # edge); a board with one upload shows it as a point in the middle, not squeezed against an edge.
            markers = page.evaluate(
                """() => {
                    const area = document.querySelector('#patch_2').getBoundingClientRect();
                    return [...document.querySelectorAll('#axes_1 > g[id^="line2d"] use')].map(u => {
                        const r = u.getBoundingClientRect();
                        return [((r.left + r.right) / 2 - area.left) / area.width,
                                ((r.top + r.bottom) / 2 - area.top) / area.height];
                    });
                }"""
            )
            assert len(markers) == (1 if chart.startswith(SINGLE) else len(TEAMS))
            assert all(0 <= x <= 1 and -0.01 <= y <= 1 for x, y in markers), markers
            if chart.startswith(SINGLE):
                assert 0.25 <= markers[0][0] <= 0.75 and 0.25 <= markers[0][1] <= 0.75, markers


# -- favicon, breadcrumbs, skip link ---------------------------------------------------------------------


def test_a_favicon_breadcrumbs_with_titles_and_a_skip_link(site: Site) -> None:
    with open_browser() as browser:
        page = log_in(browser, site.url, "ada")
        page.goto(f"{site.url}/submissions/{site.submissions[0]}")
        icon = page.locator("link[rel=icon]").get_attribute("href")
        assert icon
        answer = page.request.get(site.url + icon)
        assert answer.ok and answer.headers["content-type"].startswith("image/svg+xml")
        assert b"<svg" in answer.body()
        assert page.request.get(site.url + "/favicon.ico").ok
        assert page.locator(".crumbs").inner_text() == "Competition comp › Labels › Phase dev"

        page.keyboard.press("Tab")
        skip = page.locator(":focus")
        assert skip.inner_text() == "Skip to the content"
        skip_box = skip.bounding_box()
        assert skip_box and skip_box["y"] >= 0 and skip.is_visible(), "the focused skip link is on screen"
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "main"
        page.keyboard.press("Tab")
        focused = page.evaluate("document.activeElement.closest('main') !== null")
        assert focused, "the next Tab lands in the content, past the navigation"


# -- axe-core on every page --------------------------------------------------------------------------------

PUBLIC = ("/", "/login", "/register", "/c/comp", BOARD, "/no/such/page")
PARTICIPANT = ("/account", "/submissions", "/c/comp/team", BOARD + "/submit", BOARD + "/submissions")
ORGANIZER = ("/c/comp/organize", "/c/comp/organize/queues", BOARD + "/organize", "/competitions/new")


def _problems(page, width: int) -> list[str]:  # type: ignore[no-untyped-def]
    """axe's serious findings on the page, and whether the page itself is wider than the window."""
    page.wait_for_load_state("networkidle")
    problems = serious_violations(page)
    page_width = page.evaluate("document.documentElement.scrollWidth")
    if page_width > width:
        problems.append(f"the page is {page_width} px wide in a {width} px window")
    return problems


@pytest.mark.parametrize("width", [1400, 400])
def test_axe_finds_no_serious_violation_on_any_page(site: Site, width: int) -> None:
    found: dict[str, list[str]] = {}
    with open_browser() as browser:
        visitor = browser.new_page(viewport={"width": width, "height": 900})
        participant = log_in(browser, site.url, "ada", width=width)
        organizer = log_in(browser, site.url, "olga", width=width)
        visits = [(visitor, p) for p in PUBLIC] + [(participant, p) for p in PARTICIPANT]
        visits += [(participant, f"/submissions/{site.submissions[0]}")]
        visits += [(organizer, p) for p in ORGANIZER]
        for page, path in visits:
            page.goto(site.url + path)
            found[path] = _problems(page, width)
        # The page that asks before an expensive action (scoring the whole phase again).
        organizer.goto(site.url + BOARD + "/organize")
        organizer.get_by_role("button", name="Score every submission again").click()
        organizer.wait_for_load_state()
        assert organizer.locator("form.confirm-form").count() == 1, "the page that asks"
        found["confirm"] = _problems(organizer, width)
    found = {path: problems for path, problems in found.items() if problems}
    assert found == {}, "\n".join(f"{path}: {problem}" for path, problems in found.items() for problem in problems)
