"""A private test split through a real ``podium serve``: two famus-sv phases with ``private_share: 0.5`` and the
same secret whose golds differ only on their private instances, two teams uploading over HTTP.

Before the reveal everything a participant sees (the board as JSON, CSV and page, the per-document export, its
own submissions with their metrics, breakdowns and intervals) is computed on the public units, and so is the same
for both phases; the organizers also see the private board. After the reveal the private board ranks the phase
and the page shows each entrant's move ("shake-up").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import httpx
import pytest
from sqlalchemy import Select, select

from app.services.accounts import users
from app.storage.db import Database
from app.storage.models import Competition, Phase, Task
from scorers.description import percent
from scorers.split import Split
from tests.app.builders import bundle_file, make_competition, make_user, phase_spec
from tests.app.web.browser import CHROMIUM, log_in, open_browser, upload, wait_scored
from tests.security.live_server import TIMEOUT, LiveServer, serve

pytestmark = pytest.mark.slow

COMPETITION, TASK = "shakeup", "labels"
PHASES = ("a", "b")
INSTANCES = [f"i{i:02d}" for i in range(40)]
LEADERBOARD = "competitions/{}/tasks/{}/phases/{}/leaderboard"


def _gold(labels: dict[str, int]) -> bytes:
    return "".join(
        json.dumps({"instance_id": i, "valid_source": bool(v), "frame": "Arriving"}) + "\n" for i, v in labels.items()
    ).encode()


@dataclass(frozen=True)
class Setup:
    server: LiveServer
    rival_token: str
    private: frozenset[str]
    #: Per phase: the submission ids of the prober (perfect on the public units) and the rival.
    submitted: dict[str, tuple[int, int]]
    #: What participants saw of phase b with its private answers flipped, and with them as in phase a.
    flipped: tuple[list[Any], list[Any]] = ([], [])

    def get(self, path: str, token: str | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.get(self.server.api(path), headers=headers, timeout=TIMEOUT)

    def board(self, phase: str, token: str | None = None) -> dict[str, Any]:
        answer = self.get(LEADERBOARD.format(COMPETITION, TASK, phase), token)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def page(self, phase: str, part: str = "", token: str | None = None) -> str:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        url = f"{self.server.url}/c/{COMPETITION}/{TASK}/{phase}{part}"
        answer = httpx.get(url, headers=headers, timeout=TIMEOUT)
        assert answer.status_code == 200, answer.text
        return answer.text


@pytest.fixture(scope="module")
def live(migrated: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    truth = {i: n % 2 for n, i in enumerate(INSTANCES)}
    with serve(migrated, tmp_path_factory.mktemp("split")) as server:
        with migrated.session() as session:
            rival_token = users.issue_token(session, make_user(session, "rival"), "test")
            make_user(session, "split-organizer")
            make_competition(
                session,
                COMPETITION,
                organizers=("demo-organizer", "split-organizer"),
                scorer="famus-sv",
                phases=tuple(
                    phase_spec(slug, gold=bundle_file("gold.jsonl", _gold(truth)), private_share=0.5) for slug in PHASES
                ),
            )
            session.flush()
            rows = list(session.scalars(_phases().where(Phase.slug.in_(PHASES)).order_by(Phase.slug)))
            secret = rows[0].split_secret
            assert secret and rows[1].split_secret and secret != rows[1].split_secret, "each phase has its own"
            rows[1].split_secret = secret  # so that both phases split alike, and differ only on their private units
            private = Split(0.5, secret).private_units(INSTANCES)
            session.commit()
        # Phase b's gold is phase a's with every private answer flipped.
        flipped = {i: (1 - v if i in private else v) for i, v in truth.items()}
        _replace_gold(migrated, "b", _gold(flipped))
        # The prober is right on every public instance and wrong on every private one; the rival is right on
        # three instances in four everywhere.
        prober = {i: (1 - v if i in private else v) for i, v in truth.items()}
        rival = {i: (1 - v if n % 4 == 0 else v) for n, (i, v) in enumerate(truth.items())}
        submitted = {}
        for phase in PHASES:
            ref = (COMPETITION, TASK, phase)
            submitted[phase] = (
                upload(server.url, server.token, ref, json.dumps(prober).encode(), "prober"),
                upload(server.url, rival_token, ref, json.dumps(rival).encode(), "steady"),
            )
        for first, second in submitted.values():
            wait_scored(server.url, server.token, first)
            wait_scored(server.url, rival_token, second)
        setup = Setup(server, rival_token, private, submitted)
        # Phase b again with its gold's private answers flipped back (the same phase, so the same resampling seed):
        # what participants saw before and after must be the same.
        before = _seen(setup, "b")
        _replace_gold(migrated, "b", _gold(truth))
        rescored = httpx.post(
            server.api(LEADERBOARD.format(COMPETITION, TASK, "b").replace("/leaderboard", "/rescore")),
            headers={"Authorization": f"Bearer {server.organizer_token}"},
            timeout=TIMEOUT,
        )
        assert rescored.status_code == 202, rescored.text
        for sid, token in zip(submitted["b"], (server.token, rival_token), strict=True):
            wait_scored(server.url, token, sid)
        yield replace(setup, flipped=(before, _seen(setup, "b")))


def _phases() -> Select[tuple[Phase]]:
    return select(Phase).join(Task).join(Competition).where(Competition.slug == COMPETITION)


def _replace_gold(database: Database, phase: str, gold: bytes) -> None:
    from app.storage.blobs import put_blob

    with database.session() as session:
        row = session.scalar(_phases().where(Phase.slug == phase))
        assert row is not None
        row.gold_blob_id = put_blob(session, gold).id
        session.commit()


def _seen(live: Setup, phase: str) -> list[Any]:
    """Everything a participant sees of the phase, with the phase's own names and ids taken out."""
    prober, rival = live.submitted[phase]
    seen: list[Any] = []
    for token in (None, live.server.token, live.rival_token):
        board = live.board(phase, token)
        for entry in board["entries"]:
            entry.pop("submission_id")
            entry.pop("submitted_at")
        board["comparisons"] = [
            {k: v for k, v in c.items() if k not in ("better", "worse")} for c in board["comparisons"]
        ]
        board.pop("phase")
        seen.append(board)
    for token, sid in ((live.server.token, prober), (live.rival_token, rival)):
        own = live.get(f"submissions/{sid}", token).json()
        keys = ("status", "metrics", "breakdown", "interval", "metrics_hidden", "private_metrics", "private_board")
        seen.append({k: own.get(k) for k in keys})
    for part in ("/leaderboard.json", "/documents.json", "/leaderboard.csv"):
        text = live.page(phase, part)
        seen.append(_scrub(json.loads(text)) if part.endswith(".json") else text.splitlines()[0])
    return seen


#: What names the phase or its submissions rather than telling anything of their scores.
OWN = {"submission_id", "better", "worse", "submitted_at", "phase", "better_team", "worse_team"}


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k not in OWN}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def test_before_the_reveal_participants_see_the_same_for_golds_that_differ_on_private_units(live: Setup) -> None:
    assert 10 < len(live.private) < 30
    before, after = live.flipped
    assert before and before == after
    assert _seen(live, "b") == after
    board = live.board("b")
    prober, rival = live.submitted["b"]
    assert [e["submission_id"] for e in board["entries"]] == [prober, rival], "the prober leads the public board"
    assert board["entries"][0]["metrics"]["accuracy"] == 1.0, "perfect on the public units"
    assert board["entries"][0]["interval"]["units"] == len(INSTANCES) - len(live.private)
    assert (board["ranked_by"], board["private_share"], board["private_board"]) == ("public", 0.5, None)
    documents = live.page("b", "/documents.json")
    assert not any(unit in documents for unit in live.private), "no private unit is listed"
    page = live.page("b")
    assert "computed on the public units only" in page and "private-board" not in page
    for token, sid in ((live.server.token, prober), (live.rival_token, rival)):
        own = live.get(f"submissions/{sid}", token).json()
        assert (own["private_metrics"], own["private_board"]) == (None, None), "a team's own private numbers wait"


def test_the_organizers_see_both_boards_at_any_time(live: Setup) -> None:
    board = live.board("b", live.server.organizer_token)
    prober, rival = live.submitted["b"]
    assert [e["submission_id"] for e in board["entries"]] == [prober, rival]
    moves = board["private_board"]
    assert [(m["submission_id"], m["public_rank"], m["change"]) for m in moves] == [(rival, 2, 1), (prober, 1, -1)]
    assert moves[1]["metrics"]["accuracy"] == 0.0, "wrong on every private instance"
    own = live.get(f"submissions/{prober}", live.server.organizer_token).json()
    assert (own["metrics"]["accuracy"], own["private_metrics"]["accuracy"], own["private_board"]) == (
        1.0,
        0.0,
        "private",
    )
    assert "private-board" not in live.page("b", token=live.server.organizer_token), "pages go by login, not token"


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_organizers_page_shows_the_private_board_before_the_reveal(live: Setup) -> None:
    from playwright.sync_api import expect

    with open_browser() as browser:
        page = log_in(browser, live.server.url, "split-organizer")
        page.goto(f"{live.server.url}/c/{COMPETITION}/{TASK}/b")
        board = page.locator("section.private-board")
        expect(board.locator("h2")).to_have_text("Private board (organizers only until the reveal)")
        rows = board.locator("tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0).locator("td.change")).to_have_text("↑ 1")
        expect(rows.nth(1).locator("td.change")).to_have_text("↓ 1")


def test_after_the_reveal_the_private_units_rank_the_phase_with_the_shake_up(live: Setup) -> None:
    answer = httpx.post(
        live.server.api(LEADERBOARD.format(COMPETITION, TASK, "a").replace("/leaderboard", "/reveal")),
        headers={"Authorization": f"Bearer {live.server.organizer_token}"},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 200, answer.text
    prober, rival = live.submitted["a"]
    board = live.board("a")
    assert board["ranked_by"] == "private"
    assert [(e["submission_id"], e["rank"]) for e in board["entries"]] == [(rival, 1), (prober, 2)]
    assert board["entries"][1]["metrics"]["accuracy"] == 0.0
    assert board["entries"][0]["interval"]["units"] == len(live.private), "intervals over the private units"
    assert [(m["submission_id"], m["change"]) for m in board["private_board"]] == [(rival, 1), (prober, -1)]
    page = live.page("a")
    assert "Shake-up: the private board" in page and "↑ 1" in page and "↓ 1" in page
    assert "ranked on its private units" in page
    # The team's own submissions now show their private numbers (the private board's) beside the public ones.
    shown = {e["submission_id"]: e["metrics"]["accuracy"] for e in board["entries"]}
    for token, sid in ((live.server.token, prober), (live.rival_token, rival)):
        own = live.get(f"submissions/{sid}", token).json()
        assert (own["private_metrics"]["accuracy"], own["private_board"]) == (shown[sid], "private")
    assert live.get(f"submissions/{prober}", live.server.token).json()["metrics"]["accuracy"] == 1.0


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_after_the_reveal_a_teams_submission_page_shows_its_private_numbers(live: Setup) -> None:
    from playwright.sync_api import expect

    answer = httpx.post(
        live.server.api(LEADERBOARD.format(COMPETITION, TASK, "a").replace("/leaderboard", "/reveal")),
        headers={"Authorization": f"Bearer {live.server.organizer_token}"},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 200, answer.text
    _, rival = live.submitted["a"]
    own = live.get(f"submissions/{rival}", live.rival_token).json()
    with open_browser() as browser:
        page = log_in(browser, live.server.url, "rival")
        page.goto(f"{live.server.url}/submissions/{rival}")
        expect(page.locator("p.private-metrics")).to_contain_text("ranked by its private board")
        private = page.locator("details.breakdown", has_text="Private board: on the private units")
        expect(private.locator("tbody td").first).to_have_text(percent(own["private_metrics"]["accuracy"]))
        # Phase b is not revealed: the team's page shows its public numbers alone.
        page.goto(f"{live.server.url}/submissions/{live.submitted['b'][1]}")
        expect(page.locator("details.breakdown").first).to_be_visible()
        expect(page.locator("p.private-metrics")).to_have_count(0)
    # Phase b, not revealed, still shows the public board only.
    assert live.board("b")["ranked_by"] == "public" and live.board("b")["private_board"] is None
