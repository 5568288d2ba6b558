"""A team deletes its own submissions (the API and the button on its submissions page): the board recomputes
and the bytes no longer count; another team's, an organizer's attempt, a run still being scored and a submission
on a revealed board's final ranking are refused."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.storage.db import Database
from app.storage.models import Score, Submission
from tests.app.builders import HALF, PERFECT, as_bytes, phase_spec
from tests.app.web import test_pages as pages
from tests.app.web.test_api import PHASE, auth, entries, setup, upload, wait

USAGE = "/api/v1/competitions/comp/usage"


def _scores(db: Database) -> int:
    with db.session(read_only=True) as session:
        return session.scalar(select(func.count(Score.id))) or 0


def test_a_team_deletes_its_own_submission_and_the_board_recomputes(db: Database, client: TestClient) -> None:
    setup(db)
    ada, bob, olga = auth(db, "ada"), auth(db, "bob"), auth(db, "olga")
    half = upload(client, ada, HALF).json()["id"]
    perfect = upload(client, ada, PERFECT).json()["id"]
    wait(client)
    assert entries(client) == [(1, "ada", 1.0)]
    scores_before = _scores(db)

    assert client.delete(f"/api/v1/submissions/{perfect}", headers=bob).status_code == 404  # not bob's to see
    refused = client.delete(f"/api/v1/submissions/{perfect}", headers=olga)
    assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")
    assert "only the team that sent a submission" in refused.json()["detail"]
    assert client.delete(f"/api/v1/submissions/{perfect}").status_code == 401

    deleted = client.delete(f"/api/v1/submissions/{perfect}", headers=ada)
    assert deleted.status_code == 204, deleted.text
    assert client.get(f"/api/v1/submissions/{perfect}", headers=ada).status_code == 404
    assert entries(client) == [(1, "ada", 0.5)]  # the board recomputed without it
    assert _scores(db) == scores_before - 1  # its score went with it
    listed = client.get(f"{PHASE}/submissions", headers=ada).json()["submissions"]
    assert [s["id"] for s in listed] == [half]
    assert client.get(USAGE, headers=olga).json()["uploaded"] == {"files": 1, "bytes": len(as_bytes(HALF))}
    assert client.delete(f"/api/v1/submissions/{perfect}", headers=ada).status_code == 404


def test_a_deleted_submission_still_counts_against_the_phases_limits(db: Database, client: TestClient) -> None:
    # Deleting must not give a team more tries at the test set: what it sent today still counts today.
    setup(db, phase_spec(daily_limit=2, total_limit=3))
    ada = auth(db, "ada")
    first = upload(client, ada, HALF).json()["id"]
    upload(client, ada, PERFECT)
    wait(client)
    assert client.delete(f"/api/v1/submissions/{first}", headers=ada).status_code == 204
    refused = upload(client, ada, PERFECT)
    assert (refused.status_code, refused.json()["error"]) == (429, "quota_exhausted")


def test_a_submission_on_a_revealed_boards_final_ranking_is_kept(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(visibility="hidden"))
    ada, olga = auth(db, "ada"), auth(db, "olga")
    half = upload(client, ada, HALF).json()["id"]
    perfect = upload(client, ada, PERFECT).json()["id"]
    wait(client)
    assert client.post(f"{PHASE}/reveal", headers=olga).status_code == 200
    assert entries(client) == [(1, "ada", 1.0)]

    kept = client.delete(f"/api/v1/submissions/{perfect}", headers=ada)
    assert (kept.status_code, kept.json()["error"]) == (409, "on_final_ranking")
    assert "kept for the record" in kept.json()["detail"]
    # The team's other submission is not on the ranking: it may go.
    assert client.delete(f"/api/v1/submissions/{half}", headers=ada).status_code == 204
    assert entries(client) == [(1, "ada", 1.0)]


def test_a_submission_still_being_scored_is_not_deleted(db: Database, client: TestClient) -> None:
    setup(db)
    ada = auth(db, "ada")
    submission_id = upload(client, ada, HALF).json()["id"]
    wait(client)
    with db.session() as session:
        row = session.get(Submission, submission_id)
        assert row is not None
        row.status = "queued"  # as a rescore leaves it
        session.commit()
    busy = client.delete(f"/api/v1/submissions/{submission_id}", headers=ada)
    assert (busy.status_code, busy.json()["error"]) == (409, "submission_busy")
    assert "delete it once it is scored or failed" in busy.json()["detail"]


def test_the_submissions_page_deletes_with_its_button(db: Database, client: TestClient) -> None:
    pages.setup(db, "ada")
    pages.login(client, "ada")
    first = pages.submission_id(pages.submit(client, HALF))
    second = pages.submission_id(pages.submit(client, PERFECT))
    wait(client)
    page = client.get(f"{pages.BOARD}/submissions")
    assert f'action="/submissions/{second}/delete"' in page.text
    # The button asks first (no script): the submission is still there until the question is answered.
    asked = client.post(f"/submissions/{second}/delete", data={"csrf_token": pages.token(page)})
    assert asked.status_code == 200 and f"Delete submission {second}?" in asked.text
    assert f'href="/submissions/{second}"' in client.get(f"{pages.BOARD}/submissions").text
    answer = client.post(f"/submissions/{second}/delete", data={"csrf_token": pages.token(asked), "confirmed": "yes"})
    assert answer.status_code == 200 and f"Submission {second} is deleted." in answer.text
    assert f'href="/submissions/{second}"' not in answer.text and f'href="/submissions/{first}"' in answer.text
    # Without the form's token nothing is deleted.
    refused = client.post(f"/submissions/{first}/delete", data={})
    assert refused.status_code == 403
    assert f'href="/submissions/{first}"' in client.get(f"{pages.BOARD}/submissions").text
