"""Final submissions and a frozen board through a real ``podium serve``.

A famus-sv phase with ``private_share: 0.5`` and ``final_submissions: 2``: one team marks two submissions final
(API, command line, page; a third is refused), the other marks none and is represented by its two best on the
public board; after the reveal the private board ranks the best of each team's finals on the private units, and
the page says which team's were picked. A second phase freezes: what is submitted after ``frozen_at`` is scored
and shown to its team, and the public board does not change until the reveal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from app.services.accounts import users
from app.storage.db import Database
from app.storage.models import Competition, Phase, Task
from app.storage.types import utcnow
from scorers.split import Split
from tests.app.builders import bundle_file, make_competition, make_user, phase_spec
from tests.app.web.browser import CHROMIUM, log_in, open_browser, upload, wait_scored
from tests.security.live_server import TIMEOUT, LiveServer, serve

pytestmark = pytest.mark.slow

COMPETITION, TASK = "finals", "labels"
INSTANCES = [f"i{i:02d}" for i in range(40)]
TRUTH = {i: n % 2 for n, i in enumerate(INSTANCES)}
LEADERBOARD = "competitions/{}/tasks/{}/phases/{}/leaderboard"


def _gold() -> bytes:
    rows = (json.dumps({"instance_id": i, "valid_source": bool(v), "frame": "Arriving"}) for i, v in TRUTH.items())
    return "".join(row + "\n" for row in rows).encode()


def _wrong_where(wrong: Any) -> bytes:
    return json.dumps({i: (1 - v if wrong(n, i) else v) for n, (i, v) in enumerate(TRUTH.items())}).encode()


@dataclass(frozen=True)
class Setup:
    server: LiveServer
    tokens: dict[str, str]
    #: The submissions by name: s1 (right on the public units only), s2 (wrong on one in four), s3 (perfect) of the
    #: finalist; r1 (wrong on one in three) and r2 (right on the public units only) of the rival.
    ids: dict[str, int]

    def api(self, method: str, path: str, user: str | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.tokens[user]}"} if user else {}
        return httpx.request(method, self.server.api(path), headers=headers, timeout=TIMEOUT)

    def board(self, phase: str, user: str | None = None) -> dict[str, Any]:
        answer = self.api("GET", LEADERBOARD.format(COMPETITION, TASK, phase), user)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def podium(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "app.cli", *args, "--server", self.server.url]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def live(migrated: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    with serve(migrated, tmp_path_factory.mktemp("finals")) as server:
        with migrated.session() as session:
            tokens = {"organizer": server.organizer_token}
            for name in ("finalist", "rival"):
                tokens[name] = users.issue_token(session, make_user(session, name), "test")
            make_competition(
                session,
                COMPETITION,
                organizers=("demo-organizer",),
                scorer="famus-sv",
                phases=(
                    phase_spec("final", gold=bundle_file("g.jsonl", _gold()), private_share=0.5, final_submissions=2),
                    phase_spec("frozen", gold=bundle_file("g.jsonl", _gold())),
                ),
            )
            session.commit()
            secret = session.scalar(
                select(Phase.split_secret)
                .join(Task)
                .join(Competition)
                .where(Competition.slug == COMPETITION, Phase.slug == "final")
            )
        assert secret is not None
        private = Split(0.5, secret).private_units(INSTANCES)
        files = {
            "s1": ("finalist", _wrong_where(lambda n, i: i in private)),
            "s2": ("finalist", _wrong_where(lambda n, i: n % 4 == 0)),
            "s3": ("finalist", _wrong_where(lambda n, i: False)),
            "r1": ("rival", _wrong_where(lambda n, i: n % 3 == 0)),
            "r2": ("rival", _wrong_where(lambda n, i: i in private)),
        }
        ref = (COMPETITION, TASK, "final")
        ids = {name: upload(server.url, tokens[user], ref, data, name) for name, (user, data) in files.items()}
        for name, (user, _) in files.items():
            wait_scored(server.url, tokens[user], ids[name])
        yield Setup(server, tokens, ids)


def test_teams_mark_final_submissions_and_the_best_on_the_private_units_ranks_after_the_reveal(live: Setup) -> None:
    for name in ("s1", "s2"):
        marked = live.api("POST", f"submissions/{live.ids[name]}/choose", "finalist")
        assert marked.status_code == 200 and marked.json()["chosen"] is True, marked.text
    third = live.api("POST", f"submissions/{live.ids['s3']}/choose", "finalist")
    assert third.status_code == 409 and third.json()["error"] == "too_many_final"
    assert "marked 2 final submissions already" in third.json()["detail"]
    # The command line: refused with exit 2 and the reason; unmarking and marking again work.
    refused = live.podium("final", str(live.ids["s3"]), "--token", live.tokens["finalist"])
    assert refused.returncode == 2 and "unmark one first" in refused.stderr
    unmarked = live.podium("final", str(live.ids["s1"]), "--unmark", "--token", live.tokens["finalist"])
    assert unmarked.returncode == 0 and "not marked" in unmarked.stdout
    again = live.podium("final", str(live.ids["s1"]), "--token", live.tokens["finalist"])
    assert again.returncode == 0 and "marked" in again.stdout
    # Nobody marks another team's submission: it is not found for them.
    assert live.api("POST", f"submissions/{live.ids['r1']}/choose", "finalist").status_code == 404
    board = live.board("final")
    assert (board["final_submissions"], board["private_board"]) == (2, None), "the private board is not shown yet"
    phase = live.api("GET", f"competitions/{COMPETITION}/tasks/{TASK}/phases/final").json()
    assert (phase["private_share"], phase["final_submissions"], phase["frozen_at"]) == (0.5, 2, None)
    if CHROMIUM.exists():
        _mark_on_the_page(live)
    _reveal_and_rank(live)


def _mark_on_the_page(live: Setup) -> None:
    from playwright.sync_api import expect

    with open_browser() as browser:
        page = log_in(browser, live.server.url, "finalist")
        page.goto(f"{live.server.url}/c/{COMPETITION}/{TASK}/final/submissions")
        expect(page.locator(".final-note")).to_contain_text("Mark up to 2 of your submissions as final")
        row = page.locator("tr", has=page.locator(f"a[href$='/submissions/{live.ids['s1']}']"))
        expect(row.locator("td.final")).to_contain_text("final")
        row.get_by_role("button", name="Unmark").click()
        row = page.locator("tr", has=page.locator(f"a[href$='/submissions/{live.ids['s1']}']"))
        row.get_by_role("button", name="Mark final").click()
        row = page.locator("tr", has=page.locator(f"a[href$='/submissions/{live.ids['s1']}']"))
        expect(row.locator("td.final")).to_contain_text("final")
        expect(row.get_by_role("button", name="Unmark")).to_have_count(1)
    marked = {n: live.api("GET", f"submissions/{live.ids[n]}", "finalist").json()["chosen"] for n in ("s1", "s2", "s3")}
    assert marked == {"s1": True, "s2": True, "s3": False}


def _reveal_and_rank(live: Setup) -> None:
    """After the reveal the best final on the private units counts."""
    before = live.board("final")
    assert {e["submission_id"] for e in before["entries"]} == {live.ids["s1"], live.ids["r2"]}, "public bests"
    revealed = live.api(
        "POST", LEADERBOARD.format(COMPETITION, TASK, "final").replace("/leaderboard", "/reveal"), "organizer"
    )
    assert revealed.status_code == 200, revealed.text
    board = live.board("final")
    moves = {m["team"]: m for m in board["private_board"]}
    # The finalist's perfect s3 was not marked: its best final on the private units is s2, not s1 (public-perfect).
    assert moves["finalist"]["submission_id"] == live.ids["s2"] and moves["finalist"]["picked"] is False
    # The rival marked none: its two best public submissions (r2, r1) were picked; r1 is better on the private units.
    assert moves["rival"]["submission_id"] == live.ids["r1"] and moves["rival"]["picked"] is True
    assert {e["submission_id"] for e in board["entries"]} == {live.ids["s2"], live.ids["r1"]}
    page = httpx.get(f"{live.server.url}/c/{COMPETITION}/{TASK}/final", timeout=TIMEOUT).text
    assert "(picked)" in page and "best of its (up to 2) final submissions counts" in page


def test_a_frozen_board_does_not_change_until_the_reveal(live: Setup, migrated: Database) -> None:
    ref = (COMPETITION, TASK, "frozen")
    url = live.server.url
    first = upload(url, live.tokens["finalist"], ref, _wrong_where(lambda n, i: n % 3 == 0), "before")
    wait_scored(url, live.tokens["finalist"], first)
    frozen = live.board("frozen")
    with migrated.session() as session:
        phase = session.scalar(
            select(Phase).join(Task).join(Competition).where(Competition.slug == COMPETITION, Phase.slug == "frozen")
        )
        assert phase is not None
        phase.frozen_at = utcnow()
        session.commit()
    later = {
        "rival": upload(url, live.tokens["rival"], ref, _wrong_where(lambda n, i: False), "after"),
        "finalist": upload(url, live.tokens["finalist"], ref, _wrong_where(lambda n, i: n % 5 == 0), "better"),
    }
    for user, sid in later.items():
        wait_scored(url, live.tokens[user], sid)
    after = live.board("frozen")
    assert after["frozen_at"] is not None
    assert after["entries"] == frozen["entries"], "the public board did not change"
    assert live.board("frozen", "rival")["entries"] == frozen["entries"], "nor for the team that submitted"
    own = live.api("GET", f"submissions/{later['rival']}", "rival").json()
    assert own["status"] == "scored" and own["metrics"]["f1"] == 1.0, "the team sees its own new score"
    organizers = live.board("frozen", "organizer")
    assert organizers["entries"][0]["submission_id"] == later["rival"], "organizers see every submission"
    page = httpx.get(f"{url}/c/{'/'.join(ref)}", timeout=TIMEOUT).text
    assert "This board froze" in page
    revealed = live.api("POST", LEADERBOARD.format(*ref).replace("/leaderboard", "/reveal"), "organizer")
    assert revealed.status_code == 200
    assert live.board("frozen")["entries"][0]["submission_id"] == later["rival"], "the reveal thaws it"
