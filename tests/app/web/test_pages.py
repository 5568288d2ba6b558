"""The server-rendered pages through the real app (migrated database, embedded scoring pool):
what anyone sees, taking part, organizing, exports, hidden phases, and the pages' safety."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from datetime import timedelta
from typing import Any

from fastapi.testclient import TestClient
from httpx import Response

from app.services.accounts import teams
from app.services.accounts.users import find_user
from app.services.competitions.catalog import get_competition
from app.storage.db import Database
from app.storage.models import Submission
from app.storage.types import utcnow
from leaderboard.exports import UNCERTAINTY_FIELDS
from tests.app.builders import HALF, PASSWORD, PERFECT, as_bytes, make_competition, make_user, phase_spec

BOARD = "/c/comp/labels/dev"


def setup(db: Database, *users: str, **competition: Any) -> None:
    """The organizer ``olga``, the given participants, and the competition ``comp``."""
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        for name in users:
            make_user(session, name)
        make_competition(session, organizers=("olga",), **competition)
        session.commit()


def token(page: Response) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


def login(client: TestClient, name: str, password: str = PASSWORD) -> Response:
    form = client.get("/login")
    return client.post(
        "/login", data={"csrf_token": token(form), "name": name, "password": password}, follow_redirects=False
    )


def submit(client: TestClient, run: Any, *, board: str = BOARD, method: str = "", accept: str = "") -> Response:
    form = client.get(f"{board}/submit")
    files = {"file": ("run.json", as_bytes(run), "application/json")}
    data = {"csrf_token": token(form), "method_name": method}
    headers = {"Accept": accept} if accept else {}
    return client.post(f"{board}/submit", data=data, files=files, headers=headers, follow_redirects=False)


def wait(client: TestClient) -> None:
    assert client.app.state.podium.queue.wait_idle(30)  # type: ignore[attr-defined]


def text(page: Response) -> str:
    """The page's visible text, tags removed and spaces folded (to assert on what people read)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.text))


def submission_id(answer: Response) -> int:
    return int(answer.headers["location"].rsplit("/", 1)[1])


# -- what anyone sees ------------------------------------------------------------------------------------


def test_home_and_competition_pages_show_tasks_phases_deadlines_and_downloads(db: Database, client: TestClient) -> None:
    ends = (utcnow() + timedelta(days=3)).replace(microsecond=0)
    setup(db, phases=(phase_spec(ends_at=ends, daily_limit=2),))
    home = client.get("/")
    assert home.status_code == 200
    assert '<a href="/c/comp">Competition comp</a>' in home.text
    page = client.get("/c/comp")
    assert page.status_code == 200
    assert "A <em>test</em> competition." in page.text  # the description's Markdown, rendered
    iso = ends.isoformat().replace("+00:00", "Z")
    assert f'<time datetime="{iso}" data-local>{ends:%Y-%m-%d %H:%M} UTC</time>' in page.text
    assert f'data-countdown="{iso}">2 days 23 hours' in page.text  # 3 days minus the seconds gone
    assert 'href="/api/v1/competitions/comp/tasks/labels/files/train.json"' in page.text
    assert 'href="/api/v1/competitions/comp/tasks/labels/phases/dev/files/inputs.txt"' in page.text
    assert "secret-resource.bin" not in page.text  # organizer-only resources are not offered
    assert "Submissions per team: up to 2 a day, no limit in all" in text(page)


def test_the_leaderboard_is_public_with_percentages_arrows_and_links(db: Database, client: TestClient) -> None:
    setup(db, "ada", "bob")
    login(client, "ada")
    ada_half = submission_id(submit(client, HALF, method="coin flip"))
    login(client, "bob")
    bob_perfect = submission_id(submit(client, PERFECT, method="oracle"))
    wait(client)
    client.cookies.clear()  # anonymous from here on

    board = client.get(BOARD)
    assert board.status_code == 200
    rows = re.findall(r"<tr>.*?</tr>", board.text, flags=re.S)[1:]
    cells = [[c.strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, flags=re.S)] for r in rows]
    # bob: 4/4 right = 100.00 %; ada: 2/4 = 50.00 %
    # Rank, team and primary score come first, then the interval and the tied group.
    assert [(c[0], c[1], c[2]) for c in cells] == [("1", "bob", "100.00"), ("2", "ada", "50.00")]
    # Four labels are too few to compare 4 right with 2 right: no tied group (not "tied"), and the board says so.
    assert [c[4] for c in cells] == ["–", "–"]
    assert "Too few documents to compare entries" in text(board)
    assert "accuracy ↑" in board.text
    assert f'<a href="/submissions/{bob_perfect}">oracle</a>' in board.text
    assert 'class="table-scroll"' in board.text  # scrolls sideways on a phone
    chart = client.get(f"{BOARD}/progress.svg")
    assert chart.headers["content-type"] == "image/svg+xml"
    assert chart.content.startswith(b"<?xml") and b"<svg" in chart.content
    assert 'alt="Step chart of the best accuracy over time for 2 of 2 entrants.' in board.text

    detail = client.get(f"/submissions/{ada_half}")  # an entry of the public board: anyone may look
    assert detail.status_code == 200
    assert "50.00" in text(detail)
    assert "run.json" not in detail.text  # but not at the file
    assert client.get(f"/submissions/{ada_half}/documents.svg").headers["content-type"] == "image/svg+xml"


def test_a_submission_that_is_not_on_the_board_is_not_found_for_others(db: Database, client: TestClient) -> None:
    setup(db, "ada")
    login(client, "ada")
    first = submission_id(submit(client, HALF))
    best = submission_id(submit(client, PERFECT))
    wait(client)
    assert client.get(f"/submissions/{first}").status_code == 200  # the team sees all of its own
    client.cookies.clear()
    assert client.get(f"/submissions/{best}").status_code == 200
    assert client.get(f"/submissions/{first}").status_code == 404  # not the entry that counts
    assert client.get("/submissions/999").status_code == 404


def test_the_leaderboard_changes_as_soon_as_a_score_lands(db: Database, client: TestClient) -> None:
    setup(db, "ada")
    assert "No submission has been scored yet." in client.get(BOARD).text  # now cached, empty
    login(client, "ada")
    submit(client, HALF)
    wait(client)
    client.cookies.clear()
    assert "50.00" in client.get(BOARD).text
    assert client.get(f"{BOARD}/leaderboard.csv").text.splitlines()[1].split(",")[4:6] == ["false", "0.5"]


# -- exports ---------------------------------------------------------------------------------------------


def test_exports_of_the_leaderboard_and_the_per_document_scores(db: Database, client: TestClient) -> None:
    setup(db, "ada")
    login(client, "ada")
    submit(client, HALF, method="=cmd")
    wait(client)
    client.cookies.clear()
    board = client.get(f"{BOARD}/leaderboard.csv")
    assert board.headers["content-disposition"] == 'attachment; filename="comp-labels-dev-leaderboard.csv"'
    rows = list(csv.reader(io.StringIO(board.text)))
    assert rows[0] == ["rank", "team", "system", "submitted_at", "baseline", "accuracy", *UNCERTAINTY_FIELDS]
    assert rows[1][:3] == ["1", "ada", "'=cmd"]  # a formula-like name is defused for spreadsheets
    assert rows[1][4:6] == ["false", "0.5"]
    # The interval of 4 labels: flagged as resting on few units, not of zero width, rough; one entry, one group.
    assert rows[1][8:13] == ["0.95", "bca-expanded", "4", "true", "false"]
    assert rows[1][13:15] == ["true", "false"] and rows[1][15].startswith("rough: from 4 units")
    assert rows[1][16] == "1"
    data = client.get(f"{BOARD}/leaderboard.json").json()
    assert [(e["rank"], e["team"], e["metrics"]) for e in data["entries"]] == [(1, "ada", {"accuracy": 0.5})]
    documents = list(csv.reader(io.StringIO(client.get(f"{BOARD}/documents.csv").text)))
    # HALF labels a and b as the gold does, c and d not
    assert [(r[5], r[6]) for r in documents[1:]] == [("a", "1.0"), ("b", "1.0"), ("c", "0.0"), ("d", "0.0")]
    per_doc = client.get(f"{BOARD}/documents.json").json()
    assert per_doc["dimension"] == "document"
    assert [r["metrics"]["accuracy"] for r in per_doc["rows"]] == [1.0, 1.0, 0.0, 0.0]
    assert client.get(f"{BOARD}/leaderboard.xlsx").status_code == 404


# -- hidden phases ---------------------------------------------------------------------------------------


def test_a_hidden_phase_shows_no_numbers_until_it_is_revealed(db: Database, client: TestClient) -> None:
    setup(db, "ada", phases=(phase_spec(visibility="hidden"),))
    login(client, "ada")
    sid = submission_id(submit(client, HALF))
    wait(client)

    def numbers_seen() -> list[bool]:
        """Whether numbers show: leaderboard, exports, chart, API, the team's list, detail and its chart."""
        api = client.get("/api/v1/competitions/comp/tasks/labels/phases/dev/leaderboard").json()
        return [
            "50.00" in client.get(BOARD).text,
            client.get(f"{BOARD}/leaderboard.csv").status_code == 200,
            client.get(f"{BOARD}/leaderboard.json").status_code == 200,
            client.get(f"{BOARD}/documents.csv").status_code == 200,
            client.get(f"{BOARD}/progress.svg").status_code == 200,
            bool(api["entries"]),
            "50.00" in client.get(f"{BOARD}/submissions").text,
            "50.00" in client.get(f"/submissions/{sid}").text,
            b"100.00" in client.get(f"/submissions/{sid}/documents.svg").content,  # documents a and b
        ]

    assert numbers_seen() == [False] * 9
    detail = text(client.get(f"/submissions/{sid}"))
    assert "scored" in detail and "hidden until its organizers reveal them" in detail
    assert "hidden" in text(client.get(f"{BOARD}/submissions"))

    login(client, "olga")
    assert "50.00" in client.get(BOARD).text  # organizers see the numbers all along
    csrf = token(client.get(f"{BOARD}/organize"))
    asked = client.post(f"{BOARD}/organize/reveal", data={"csrf_token": csrf})  # one click only asks
    assert "Reveal the results of Phase dev?" in text(asked)
    assert 'name="confirmed" value="yes"' in asked.text
    login(client, "ada")
    assert numbers_seen() == [False] * 9
    login(client, "olga")
    csrf = token(client.get(f"{BOARD}/organize"))
    reveal = client.post(f"{BOARD}/organize/reveal", data={"csrf_token": csrf, "confirmed": "yes"})
    assert reveal.status_code == 200
    login(client, "ada")
    assert numbers_seen() == [True] * 9


# -- taking part -----------------------------------------------------------------------------------------


def test_register_submit_and_follow_the_status(db: Database, client: TestClient) -> None:
    setup(db, phases=(phase_spec(daily_limit=2),))
    form = client.get("/register?next=/c/comp")
    answer = client.post(
        "/register",
        data={"csrf_token": token(form), "name": "ada", "password": PASSWORD, "password_again": PASSWORD},
        follow_redirects=False,
    )
    assert answer.status_code == 303
    assert "2 of 2 left" in text(client.get(f"{BOARD}/submit"))
    accepted = submit(client, HALF, method="coin flip")
    assert accepted.status_code == 303
    sid = submission_id(accepted)
    wait(client)
    page = client.get(f"/submissions/{sid}")
    assert "Your file was accepted" in page.text
    assert 'data-status="scored"' in page.text
    assert client.get(f"/submissions/{sid}/status.json").json() == {"id": sid, "status": "scored", "message": ""}
    mine = text(client.get(f"{BOARD}/submissions"))
    assert "1 of 2 left" in mine and "coin flip" in mine and "50.00" in mine


def test_a_refused_registration_shows_the_form_again_and_makes_no_account(db: Database, client: TestClient) -> None:
    setup(db)
    form = client.get("/register?next=/c/comp")
    data = {"csrf_token": token(form), "name": "ada", "email": "ada@example.org", "next": "/c/comp"}
    differ = client.post("/register", data={**data, "password": PASSWORD, "password_again": PASSWORD + "!"})
    assert differ.status_code == 400
    assert "the two passwords differ" in text(differ)
    for kept in ("ada", "ada@example.org", "/c/comp"):  # what was typed stays in the form
        assert f'value="{kept}"' in differ.text
    taken = client.post("/register", data={**data, "name": "OLGA", "password": PASSWORD, "password_again": PASSWORD})
    assert taken.status_code == 409 and 'value="OLGA"' in taken.text
    with db.session() as session:
        assert find_user(session, "ada") is None
    assert client.get("/account", follow_redirects=False).status_code == 303  # not logged in


def test_a_refused_file_shows_its_problems_and_costs_nothing(db: Database, client: TestClient) -> None:
    setup(db, "ada")
    login(client, "ada")
    refused = submit(client, {"a": "x", "zzz": "y"})
    assert refused.status_code == 422
    assert "<code>key &#39;zzz&#39;</code>: is not in the gold" in refused.text
    as_json = submit(client, {"a": "x"}, accept="application/json")  # what the progress-bar script gets
    assert as_json.status_code == 422
    assert {"where": "key 'b'", "message": "is missing"} in as_json.json()["problems"]
    accepted = submit(client, HALF, accept="application/json")
    assert accepted.status_code == 202
    assert accepted.json()["redirect"] == f"/submissions/{accepted.json()['id']}"
    with db.session() as session:
        assert session.query(Submission).count() == 1


def test_pages_that_need_a_login_redirect_to_the_form(db: Database, client: TestClient) -> None:
    setup(db)
    answer = client.get(f"{BOARD}/submit", follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/login?next=%2Fc%2Fcomp%2Flabels%2Fdev%2Fsubmit"
    assert client.get("/login?next=//evil.example").text.count('value="//evil.example"') == 0


def test_teams_are_created_and_joined_on_the_team_page(db: Database, client: TestClient) -> None:
    setup(db, "ada", "bob")
    login(client, "ada")
    page = client.get("/c/comp/team")
    client.post("/c/comp/team/create", data={"csrf_token": token(page), "name": "Lovelace Lab"})
    with db.session() as session:
        ada = find_user(session, "ada")
        assert ada is not None
        team = teams.team_of(session, ada, get_competition(session, "comp").id)
        assert team is not None and team.name == "Lovelace Lab"
        code = team.invite_code
    founders_page = client.get("/c/comp/team")
    assert code in founders_page.text
    # The founder is told how teammates use the code (the join form is on their page, not the founder's).
    assert "below" not in text(founders_page) and "<h2>Join a team</h2>" not in founders_page.text
    assert 'href="/c/comp/team">http://testserver/c/comp/team</a>' in founders_page.text
    assert "and enters it under “Join a team”" in text(founders_page)
    login(client, "bob")
    form = client.get("/c/comp/team")
    assert "<h2>Join a team</h2>" in form.text
    joined = client.post("/c/comp/team/join", data={"csrf_token": token(form), "invite_code": code})
    assert "You joined the team Lovelace Lab." in joined.text
    taken = client.post("/c/comp/team/create", data={"csrf_token": token(joined), "name": "Other"})
    assert "you are already in the team &#39;Lovelace Lab&#39;" in taken.text


def test_a_team_chooses_the_submission_that_counts(db: Database, client: TestClient) -> None:
    setup(db, "ada", phases=(phase_spec(selection="chosen"),))
    login(client, "ada")
    perfect = submission_id(submit(client, PERFECT))
    half = submission_id(submit(client, HALF))
    wait(client)
    assert ">100.00<" not in client.get(BOARD).text  # without a choice the latest (HALF) counts
    page = client.get(f"{BOARD}/submissions")
    client.post(f"/submissions/{perfect}/choose", data={"csrf_token": token(page)})
    board = client.get(BOARD).text
    assert f'href="/submissions/{perfect}"' in board and f'href="/submissions/{half}"' not in board


# -- organizers ------------------------------------------------------------------------------------------


def test_organizers_see_every_submission_with_errors_rescore_and_download(db: Database, client: TestClient) -> None:
    setup(db, "ada", scorer_options={"crash": True})
    login(client, "ada")
    sid = submission_id(submit(client, HALF))
    wait(client)
    assert "problem on our side" in text(client.get(f"/submissions/{sid}"))  # the team's message
    assert "the scorer exploded" not in client.get(f"/submissions/{sid}").text  # not the platform's error
    assert client.get(f"{BOARD}/organize").status_code == 403

    login(client, "olga")
    page = client.get(f"{BOARD}/organize?status=failed")
    assert "RuntimeError: the scorer exploded" in page.text
    assert "1 shown." in text(page)
    assert "0 shown." in text(client.get(f"{BOARD}/organize?team=nobody"))
    everything = client.get(f"{BOARD}/organize/everything.zip")
    assert everything.headers["content-type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(everything.content))
    assert archive.read(f"files/{sid}-run.json") == as_bytes(HALF)
    assert "the scorer exploded" in archive.read("submissions.csv").decode()
    asked = client.post(f"{BOARD}/organize/rescore", data={"csrf_token": token(page)})
    assert "Score every submission of Phase dev again?" in text(asked)
    with db.session() as session:
        assert session.get(Submission, sid).status == "failed"  # nothing queued before confirming
    rescored = client.post(f"{BOARD}/organize/rescore", data={"csrf_token": token(page), "confirmed": "yes"})
    assert "1 submission(s) queued for scoring again" in rescored.text


# -- safety ----------------------------------------------------------------------------------------------


def test_a_script_in_a_team_name_is_shown_as_text(db: Database, client: TestClient) -> None:
    evil = "<script>alert(1)</script>"
    setup(db, "ada")
    with db.session() as session:
        ada = find_user(session, "ada")
        assert ada is not None
        teams.create_team(session, ada, get_competition(session, "comp"), evil)
        session.commit()
    login(client, "ada")
    submit(client, HALF, method='"><img src=x onerror=alert(2)>')
    wait(client)
    for page in (client.get(BOARD), client.get("/c/comp/team"), client.get(f"{BOARD}/submissions")):
        assert evil not in page.text
        assert "onerror=alert" not in page.text.replace("onerror=alert(2)&gt;", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in client.get(BOARD).text
    assert "script-src 'self'" in client.get(BOARD).headers["content-security-policy"]


def test_descriptions_are_sanitised_markdown(db: Database, client: TestClient) -> None:
    setup(db, description="Hello <script>alert(1)</script> [x](javascript:alert(2)) **bold**")
    page = client.get("/c/comp").text
    assert "<strong>bold</strong>" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # raw HTML is shown as text
    assert 'href="javascript:' not in page  # and a script link is not made a link


def test_every_form_post_needs_the_session_token(db: Database, client: TestClient) -> None:
    setup(db, "ada")
    missing = client.post("/login", data={"name": "ada", "password": PASSWORD}, follow_redirects=False)
    assert missing.status_code == 403
    assert "did not come from this site" in missing.text
    assert client.get("/c/comp/team", follow_redirects=False).status_code == 303  # not logged in
    login(client, "ada")
    forged = client.post(
        f"{BOARD}/submit",
        data={"csrf_token": "forged", "method_name": "x"},
        files={"file": ("run.json", as_bytes(HALF), "application/json")},
    )
    assert forged.status_code == 403
    assert client.post("/c/comp/team/create", data={"name": "Sneaky"}).status_code == 403
    assert client.post("/logout", data={"csrf_token": "ünïcode"}).status_code == 403
    with db.session() as session:
        assert session.query(Submission).count() == 0


def test_the_session_cookie_is_http_only_and_same_site(db: Database, client: TestClient) -> None:
    setup(db, "ada")
    cookie = login(client, "ada").headers["set-cookie"]
    assert cookie.startswith("podium_session=")
    assert "httponly" in cookie.lower() and "samesite=lax" in cookie.lower()
    assert "secure" not in cookie.lower()  # PODIUM_COOKIE_SECURE is off in tests (plain HTTP)


def test_logins_are_throttled_per_user_name(db: Database, client: TestClient) -> None:
    setup(db, "ada")
    for _ in range(5):
        assert login(client, "ada", "wrong password").status_code == 401
    refused = login(client, "ada")  # even the right password waits now
    assert refused.status_code == 429
    assert "Too many failed logins for this user name. Try again in 15 minutes." in refused.text
    assert 890 <= int(refused.headers["retry-after"]) <= 900
    assert login(client, "olga").status_code == 303  # other accounts are not locked out


def test_the_competition_page_phrases_the_limits_for_people(db: Database, client: TestClient) -> None:
    phases = (
        phase_spec("free"),
        phase_spec("daily", daily_limit=3),
        phase_spec("total", total_limit=10),
        phase_spec("both", daily_limit=3, total_limit=10),
    )
    setup(db, phases=phases)
    page = text(client.get("/c/comp"))
    assert "Submissions per team: unlimited; files up to 50 MB" in page
    assert "Submissions per team: up to 3 a day, no limit in all" in page
    assert "Submissions per team: up to 10 in all, no daily limit" in page
    assert "Submissions per team: up to 3 a day and 10 in all" in page
    assert "Limits:" not in page
