"""Baseline runs on the organizers' page: the form that starts one, the table that follows it, cancelling."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.storage.db import Database
from app.storage.models import BaselineRun
from tests.app.builders import make_user
from tests.app.labels_baselines import NAME
from tests.app.web.test_api import PHASE as API_PHASE
from tests.app.web.test_api import auth
from tests.app.web.test_pages import BOARD, login, setup, text, token, wait
from tests.app.worker.test_baseline_job import eventually

ORGANIZE = f"{BOARD}/organize"


def last_run(db: Database) -> int:
    """The newest run's id (ids are not reset between tests on PostgreSQL)."""
    with db.session(read_only=True) as session:
        found: int = session.scalar(select(func.max(BaselineRun.id)))
        return found


def test_an_organizer_starts_a_run_and_follows_it_on_the_page(db: Database, client: TestClient, system: Any) -> None:
    setup(db)
    login(client, "olga")
    page = client.get(ORGANIZE)
    assert f'<option value="{NAME}">Copy the training labels ({NAME} 2)</option>' in page.text
    started = client.post(
        f"{ORGANIZE}/baseline-runs", data={"csrf_token": token(page), "baseline": NAME}, follow_redirects=False
    )
    assert (started.status_code, started.headers["location"]) == (303, ORGANIZE)
    wait(client)
    run = last_run(db)
    shown = text(client.get(ORGANIZE))
    assert f"Baseline run {run} ({NAME} 2) is queued." in shown
    assert "Copy the training labels" in shown and "succeeded" in shown
    assert "4 / 4 (100.00 %)" in shown
    assert client.get(f"/baseline-runs/{run}/status.json").json()["status"] == "succeeded"


def test_a_refused_start_shows_the_reason(db: Database, client: TestClient, system: Any) -> None:
    setup(db)
    login(client, "olga")
    refused = client.post(
        f"{ORGANIZE}/baseline-runs", data={"csrf_token": token(client.get(ORGANIZE)), "baseline": "famus-sv-lemma"}
    )
    assert refused.status_code == 422
    assert "the baseline does not fit this task" in text(refused)


def test_an_organizer_cancels_a_run_from_the_page(db: Database, client: TestClient, system: Any) -> None:
    setup(db)
    login(client, "olga")
    slow = {"baseline": NAME, "options": {"steps": 100_000}}  # other options than the defaults: the API
    run = client.post(f"{API_PHASE}/baseline-runs", headers=auth(db, "olga"), json=slow).json()["id"]
    status = f"/baseline-runs/{run}/status.json"
    eventually(lambda: client.get(status).json()["progress"]["done"] > 0, "the run's first report")
    page = client.get(ORGANIZE)
    assert f'action="/baseline-runs/{run}/cancel"' in page.text
    asked = client.post(f"/baseline-runs/{run}/cancel", data={"csrf_token": token(page)}, follow_redirects=False)
    assert (asked.status_code, text(asked).count(f"Cancel baseline run {run}")) == (200, 2)  # title and heading
    assert client.get(status).json()["status"] == "running"  # one click only asked
    confirmed = {"csrf_token": token(page), "confirmed": "yes"}
    cancelled = client.post(f"/baseline-runs/{run}/cancel", data=confirmed, follow_redirects=False)
    assert (cancelled.status_code, cancelled.headers["location"]) == (303, ORGANIZE)
    wait(client)
    after = client.get(ORGANIZE)
    assert f"Baseline run {run} stops at its next check." in text(after)
    assert client.get(status).json()["status"] == "cancelled"
    assert f'action="/baseline-runs/{run}/cancel"' not in after.text  # a finished run has no cancel button
    again = client.post(f"/baseline-runs/{run}/cancel", data={"csrf_token": token(after), "confirmed": "yes"})
    assert again.status_code == 409


def test_participants_see_no_runs(db: Database, client: TestClient, system: Any) -> None:
    setup(db)
    with db.session() as session:
        make_user(session, "ada")
        session.commit()
    login(client, "olga")
    client.post(f"{ORGANIZE}/baseline-runs", data={"csrf_token": token(client.get(ORGANIZE)), "baseline": NAME})
    status = f"/baseline-runs/{last_run(db)}/status.json"
    eventually(lambda: client.get(status).json()["status"] == "succeeded", "the run")
    client.post("/logout", data={"csrf_token": token(client.get(ORGANIZE))})
    login(client, "ada")
    assert client.get(ORGANIZE).status_code == 403
    assert client.get(status).status_code == 404
    form = client.get(BOARD)
    refused = client.post(f"{ORGANIZE}/baseline-runs", data={"csrf_token": token(form), "baseline": NAME})
    assert refused.status_code == 403
