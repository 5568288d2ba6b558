"""Organizers adjust a phase after it is online, through ``PATCH /api/v1/.../phases/{p}`` and the
edit form of the organize page: the same rules, the same refusals by field, one log of changes."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import select, update

from app.storage.db import Database
from app.storage.models import Phase
from app.storage.types import utcnow
from tests.app.builders import HALF, phase_spec, utc
from tests.app.web.test_api import PHASE, auth, entries, setup, upload, wait
from tests.app.web.test_pages import BOARD, login, text, token


def changes(client: TestClient, headers: dict[str, str]) -> list[tuple[str, str | None, str | None, str | None]]:
    answer = client.get(f"{PHASE}/changes", headers=headers)
    assert answer.status_code == 200
    return [(c["field"], c["old"], c["new"], c["by"]) for c in answer.json()["changes"]]


def test_an_organizer_changes_the_window_limits_visibility_and_description(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(ends_at=utc("2030-01-01T00:00Z"), daily_limit=3))
    olga = auth(db, "olga")
    answer = client.patch(
        PHASE,
        headers=olga,
        json={"ends_at": None, "daily_limit": None, "total_limit": 5, "visibility": "hidden", "description": "New."},
    )
    assert answer.status_code == 200, answer.text
    phase = answer.json()
    assert (phase["ends_at"], phase["daily_limit"], phase["total_limit"]) == (None, None, 5)
    assert (phase["visibility"], phase["description"]) == ("hidden", "New.")
    assert client.get(PHASE).json()["ends_at"] is None  # stored, not only answered
    assert sorted(changes(client, olga)) == [
        ("daily_limit", "3", None, "olga"),
        ("description", "", "New.", "olga"),
        ("ends_at", "2030-01-01T00:00Z", None, "olga"),
        ("total_limit", None, "5", "olga"),
        ("visibility", "public", "hidden", "olga"),
    ]
    # Sending what is already so changes and logs nothing.
    assert client.patch(PHASE, headers=olga, json={"total_limit": 5}).status_code == 200
    assert len(changes(client, olga)) == 5


def test_closing_a_phase_by_its_window_stops_submissions(db: Database, client: TestClient) -> None:
    setup(db)
    olga, ada = auth(db, "olga"), auth(db, "ada")
    past = (utcnow() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%MZ")
    assert client.patch(PHASE, headers=olga, json={"ends_at": past}).json()["state"] == "closed"
    refused = upload(client, ada, HALF)
    assert (refused.status_code, refused.json()["error"]) == (409, "phase_closed")
    assert client.patch(PHASE, headers=olga, json={"ends_at": None}).json()["state"] == "open"
    assert upload(client, ada, HALF).status_code == 202


def test_hiding_a_public_phase_takes_its_numbers_off_the_cached_board_at_once(db: Database, client: TestClient) -> None:
    setup(db)
    olga, ada = auth(db, "olga"), auth(db, "ada")
    assert upload(client, ada, HALF).status_code == 202
    wait(client)
    assert entries(client) == [(1, "ada", 0.5)]  # the public board, now cached
    assert client.patch(PHASE, headers=olga, json={"visibility": "hidden"}).status_code == 200
    board = client.get(f"{PHASE}/leaderboard").json()
    assert (board["hidden"], board["entries"]) == (True, [])
    assert entries(client, olga) == [(1, "ada", 0.5)]  # organizers still see it
    assert client.patch(PHASE, headers=olga, json={"visibility": "public"}).status_code == 200
    assert entries(client) == [(1, "ada", 0.5)]


def test_bad_values_are_refused_by_field_and_change_nothing(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(starts_at=utc("2026-01-01T00:00Z")))
    olga = auth(db, "olga")
    answer = client.patch(
        PHASE,
        headers=olga,
        json={"ends_at": "2026-13-01", "daily_limit": 0, "visibility": "secret", "description": "Kept?"},
    )
    assert answer.status_code == 422
    body = answer.json()
    assert body["error"] == "invalid_input"
    assert {p["where"] for p in body["problems"]} == {"ends_at", "daily_limit", "visibility"}
    assert client.get(PHASE).json()["description"] == ""  # the good field was not applied either

    before_start = client.patch(PHASE, headers=olga, json={"ends_at": "2025-12-31T00:00Z"})
    assert [p["where"] for p in before_start.json()["problems"]] == ["ends_at"]
    unzoned = client.patch(PHASE, headers=olga, json={"starts_at": "2026-02-01T00:00"})
    assert "no time zone" in unzoned.json()["problems"][0]["message"]
    unknown = client.patch(PHASE, headers=olga, json={"gold": "x"})
    assert (unknown.status_code, unknown.json()["problems"][0]["where"]) == (422, "body.gold")
    wrong_type = client.patch(PHASE, headers=olga, json={"total_limit": "5"})
    assert (wrong_type.status_code, wrong_type.json()["problems"][0]["where"]) == (422, "body.total_limit")
    # A limit past the database's 32-bit integer column is refused by name, never a PostgreSQL error.
    too_large = client.patch(PHASE, headers=olga, json={"total_limit": 2**31})
    assert (too_large.status_code, too_large.json()["problems"][0]["where"]) == (422, "total_limit")
    null_visibility = client.patch(PHASE, headers=olga, json={"visibility": None})
    assert null_visibility.json()["problems"][0]["where"] == "visibility"
    assert changes(client, olga) == []


def test_a_bad_limit_and_a_bad_window_are_named_in_one_answer(db: Database, client: TestClient) -> None:
    """The window (its end after its start) is checked with the other fields, not after them: an organizer
    who got a limit and the window wrong reads both problems at once, from the API and from the form."""
    setup(db, phase_spec(starts_at=utc("2026-01-01T00:00Z")))
    olga = auth(db, "olga")
    answer = client.patch(PHASE, headers=olga, json={"daily_limit": 0, "ends_at": "2025-12-31T00:00Z"})
    assert answer.status_code == 422
    assert {p["where"] for p in answer.json()["problems"]} == {"daily_limit", "ends_at"}

    login(client, "olga")
    page = client.get(f"{BOARD}/organize")
    form = {
        "csrf_token": token(page),
        "starts_at": "2026-01-01T00:00",
        "ends_at": "2025-06-30T12:00",
        "daily_limit": "0",
        "total_limit": "",
        "visibility": "public",
        "description": "",
    }
    bad = client.post(f"{BOARD}/organize/phase", data=form)
    assert bad.status_code == 422
    shown = text(bad)
    assert "daily_limit : expected a whole number of at least 1" in shown
    assert "ends_at : the phase must end later than it starts" in shown
    assert changes(client, olga) == []


def test_only_the_competitions_organizers_may_edit(db: Database, client: TestClient) -> None:
    setup(db)
    with db.session() as session:
        from tests.app.builders import make_competition, make_user

        make_user(session, "otto", organizer=True)
        make_competition(session, "other", organizers=("otto",))
        session.commit()
    body = {"daily_limit": 1}
    assert client.patch(PHASE, json=body).status_code == 401
    for name in ("ada", "otto"):  # a participant, and the organizer of another competition
        refused = client.patch(PHASE, headers=auth(db, name), json=body)
        assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")
        assert client.get(f"{PHASE}/changes", headers=auth(db, name)).status_code == 403
    missing = client.patch(PHASE.replace("/dev", "/nope"), headers=auth(db, "ada"), json=body)
    assert (missing.status_code, missing.json()["error"]) == (404, "not_found")
    assert client.get(PHASE).json()["daily_limit"] is None


def test_the_edit_form_uses_the_same_rules_and_shows_the_log(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(description="line one\nline two"))
    login(client, "olga")
    page = client.get(f"{BOARD}/organize")
    assert "No change since the phase was created." in text(page)
    form = {
        "csrf_token": token(page),
        "starts_at": "",
        "ends_at": "2031-06-30T12:00",
        "daily_limit": "2",
        "total_limit": "",
        "visibility": "public",
        "description": "line one\r\nline two",  # as a browser sends a textarea
    }
    saved = client.post(f"{BOARD}/organize/phase", data=form)
    assert "Phase saved; changed: ends_at, daily_limit." in text(saved)
    shown = text(saved)
    assert "2031-06-30T12:00Z" in shown and "olga" in shown
    assert client.get("/api/v1/competitions/comp/tasks/labels/phases/dev").json()["daily_limit"] == 2

    bad = client.post(f"{BOARD}/organize/phase", data={**form, "daily_limit": "many", "ends_at": "2020-01-01T00:0"})
    assert bad.status_code == 422
    shown = text(bad)
    assert "the phase was not changed" in shown
    assert "daily_limit : expected a whole number of at least 1" in shown
    assert 'value="many"' in bad.text  # what was typed stays in the form
    assert "ends_at : expected an ISO 8601 UTC time" in shown

    login(client, "ada")
    ada_form = {**form, "csrf_token": token(client.get(BOARD)), "daily_limit": "9"}
    assert client.post(f"{BOARD}/organize/phase", data=ada_form).status_code == 403
    assert client.get("/api/v1/competitions/comp/tasks/labels/phases/dev").json()["daily_limit"] == 2


def test_the_form_leaves_alone_what_was_not_changed(db: Database, client: TestClient) -> None:
    """An imported phase may hold a time with seconds, which the form shows to the minute: saving the form
    for another field keeps it exactly, and logs only that field."""
    setup(db, phase_spec(starts_at=utc("2026-01-01T00:00Z")))
    long_description = "An imported page. " * 2000  # long, but within what a phase's description may be
    with db.session() as session:
        session.execute(update(Phase).values(starts_at=utc("2026-01-01T08:30:45Z"), description=long_description))
        session.commit()
    login(client, "olga")
    page = client.get(f"{BOARD}/organize")
    assert 'name="starts_at" value="2026-01-01T08:30"' in page.text
    form = {
        "csrf_token": token(page),
        "starts_at": "2026-01-01T08:30",
        "ends_at": "",
        "daily_limit": "4",
        "total_limit": "",
        "visibility": "public",
        "description": long_description,
    }
    saved = client.post(f"{BOARD}/organize/phase", data=form)
    assert "Phase saved; changed: daily_limit." in text(saved)
    with db.session() as session:
        assert session.scalar(select(Phase.starts_at)) == utc("2026-01-01T08:30:45Z")
        assert session.scalar(select(Phase.description)) == long_description


def test_the_freeze_and_final_submissions_are_edited_like_the_other_settings(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(private_share=0.5))
    olga, ada = auth(db, "olga"), auth(db, "ada")
    past = (utcnow() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%MZ")
    answer = client.patch(PHASE, headers=olga, json={"frozen_at": past, "final_submissions": 2})
    assert answer.status_code == 200, answer.text
    assert (answer.json()["frozen_at"][:16], answer.json()["final_submissions"]) == (past[:16], 2)
    assert {c[:3] for c in changes(client, olga)} == {("frozen_at", None, past), ("final_submissions", None, "2")}
    # Frozen since yesterday: a new submission is scored but stays off the public board until the freeze is lifted.
    assert upload(client, ada, HALF).status_code == 202
    wait(client)
    # (Its score is on the public units, which the phase's own secret picks: only who is ranked is compared.)
    assert entries(client) == [] and [e[:2] for e in entries(client, olga)] == [(1, "ada")]
    assert client.get(f"{PHASE}/leaderboard").json()["final_submissions"] == 2
    assert client.patch(PHASE, headers=olga, json={"frozen_at": None}).status_code == 200
    assert [e[:2] for e in entries(client)] == [(1, "ada")], "the cached board follows the edit at once"
    zero = client.patch(PHASE, headers=olga, json={"final_submissions": 0})
    assert zero.status_code == 422 and [p["where"] for p in zero.json()["problems"]] == ["final_submissions"]


def test_final_submissions_are_refused_on_a_phase_without_a_private_split(db: Database, client: TestClient) -> None:
    setup(db)
    olga = auth(db, "olga")
    answer = client.patch(PHASE, headers=olga, json={"final_submissions": 2})
    assert answer.status_code == 422
    (problem,) = answer.json()["problems"]
    assert problem["where"] == "final_submissions" and "private_share" in problem["message"]
    login(client, "olga")
    page = client.get(f"{BOARD}/organize")
    assert 'name="frozen_at"' in page.text and 'name="final_submissions"' not in page.text


def test_the_edit_form_sets_the_freeze_and_final_submissions(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(private_share=0.5))
    login(client, "olga")
    page = client.get(f"{BOARD}/organize")
    form = {
        "csrf_token": token(page),
        "starts_at": "",
        "ends_at": "",
        "daily_limit": "",
        "total_limit": "",
        "visibility": "public",
        "description": "",
        "frozen_at": "2031-06-30T12:00",
        "final_submissions": "3",
    }
    saved = client.post(f"{BOARD}/organize/phase", data=form)
    assert "Phase saved; changed: frozen_at, final_submissions." in text(saved)
    phase = client.get("/api/v1/competitions/comp/tasks/labels/phases/dev").json()
    assert (phase["frozen_at"][:16], phase["final_submissions"]) == ("2031-06-30T12:00", 3)
    bad = client.post(f"{BOARD}/organize/phase", data={**form, "final_submissions": "two"})
    assert bad.status_code == 422 and "final_submissions : expected a whole number of at least 1" in text(bad)


def test_the_boards_of_a_phase_are_edited_by_the_bundles_rules(db: Database, client: TestClient) -> None:
    setup(db)
    olga, ada = auth(db, "olga"), auth(db, "ada")
    assert upload(client, ada, HALF).status_code == 202
    wait(client)
    assert client.get(f"{PHASE}/leaderboard").json()["board"] == "plain"  # now cached
    assert client.get(f"{BOARD}/boards/acc.json").status_code == 404
    further = [{"name": "acc", "title": "By accuracy", "metrics": ["accuracy"]}]
    answer = client.patch(PHASE, headers=olga, json={"board": "ladder", "boards": further})
    assert answer.status_code == 200, answer.text
    assert client.get(f"{PHASE}/leaderboard").json()["board"] == "ladder", "the cached board follows at once"
    shown = client.get(f"{BOARD}/boards/acc.json")
    assert shown.status_code == 200 and [e["team"] for e in shown.json()["entries"]] == ["ada"]
    logged = {c[0]: c[1:3] for c in changes(client, olga)}
    assert logged["board"] == ("plain", "ladder")
    assert logged["boards"][0] is None and '"name": "acc"' in (logged["boards"][1] or "")

    bad = client.patch(
        PHASE, headers=olga, json={"board": "stairs", "boards": [{"name": "x", "metrics": ["no-such-metric"]}]}
    )
    assert bad.status_code == 422
    wheres = [p["where"] for p in bad.json()["problems"]]
    assert "board" in wheres and any(w.startswith("boards") for w in wheres), wheres
    assert client.get(f"{PHASE}/leaderboard").json()["board"] == "ladder", "a refused edit changes nothing"

    assert client.patch(PHASE, headers=olga, json={"boards": None, "board": None}).status_code == 200
    assert client.get(f"{BOARD}/boards/acc.json").status_code == 404
    assert client.get(f"{PHASE}/leaderboard").json()["board"] == "plain"

    login(client, "olga")
    page = client.get(f"{BOARD}/organize")
    form = {"csrf_token": token(page), "visibility": "public", "board": "ladder"}
    saved = client.post(f"{BOARD}/organize/phase", data={**_shown_form(page.text), **form})
    assert "Phase saved; changed: board." in text(saved)
    assert client.get(f"{PHASE}/leaderboard").json()["board"] == "ladder"


def _shown_form(page: str) -> dict[str, str]:
    """The settings form's text fields as the page shows them."""
    import re

    fields = re.findall(r'<input type="(?:text|datetime-local)"[^>]* name="(\w+)" value="([^"]*)"', page)
    return dict(fields)
