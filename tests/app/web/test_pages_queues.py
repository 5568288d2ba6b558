"""The organizers' page of a competition's own queues, and what the competition's page says when its queue has
runs waiting and no worker: through the pages' forms, with the same services as the API."""

from __future__ import annotations

import re
from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import update

from app.storage.db import Database
from app.storage.models import CodeRun
from app.storage.types import utcnow
from tests.app.test_code_runs import create
from tests.app.test_worker_queues import WORKER, bearer, upload
from tests.app.web.test_pages import login, token

PAGE = "/c/svident-code/organize/queues"


def test_organizers_manage_queues_credentials_and_routes_on_the_page(db: Database, client: TestClient) -> None:
    create(db)
    login(client, "olga")
    page = client.get(PAGE)
    assert page.status_code == 200 and "No phase of this competition runs code" not in page.text
    assert 'href="/c/svident-code/organize/queues"' in client.get("/c/svident-code/organize").text
    made = client.post(PAGE, data={"csrf_token": token(page), "name": "lab"}, follow_redirects=True)
    assert made.status_code == 200 and "Queue lab created" in made.text and "Queue lab</h2>" in made.text
    refused = client.post(PAGE, data={"csrf_token": token(page), "name": "lab"})
    assert refused.status_code == 409 and "already has a queue named" in refused.text
    issued = client.post(f"{PAGE}/lab/credentials", data={"csrf_token": token(page), "label": "gpu box"})
    assert issued.status_code == 200 and issued.headers["cache-control"] == "no-store"
    secret = re.search(r"pwk_[A-Za-z0-9_-]+", issued.text)
    assert secret is not None
    again = client.get(PAGE)
    assert secret.group(0) not in again.text and "gpu box" in again.text and "<td>never</td>" in again.text
    assert secret.group(0) not in str(client.cookies)
    routed = client.post(
        f"{PAGE}/route",
        data={"csrf_token": token(page), "phase": "detection/test", "queue": "lab"},
        follow_redirects=True,
    )
    assert "go to queue lab now" in routed.text and "Phases: detection/test" in routed.text
    # The worker's credential works until revoked on the page.
    assert client.post(f"{WORKER}/claim", headers=bearer(secret.group(0))).status_code == 200
    credential_id = re.search(r"credentials/(\d+)/revoke", again.text)
    assert credential_id is not None
    revoked = client.post(
        f"{PAGE}/lab/credentials/{credential_id.group(1)}/revoke",
        data={"csrf_token": token(page)},
        follow_redirects=True,
    )
    assert "revoked: its worker is refused" in revoked.text and ">revoked<" in revoked.text
    assert client.post(f"{WORKER}/claim", headers=bearer(secret.group(0))).status_code == 401
    back = client.post(
        f"{PAGE}/route", data={"csrf_token": token(page), "phase": "detection/test", "queue": ""}, follow_redirects=True
    )
    assert "go to the platform's workers now" in back.text.replace("&#39;", "'")


def test_only_organizers_reach_the_page(db: Database, client: TestClient) -> None:
    create(db)
    login(client, "ada")
    assert client.get(PAGE).status_code == 403


def test_the_competition_page_says_when_runs_wait_for_workers_that_are_silent(db: Database, client: TestClient) -> None:
    create(db)
    login(client, "olga")
    page = client.get(PAGE)
    client.post(PAGE, data={"csrf_token": token(page), "name": "lab"})
    issued = client.post(f"{PAGE}/lab/credentials", data={"csrf_token": token(page), "label": "box"})
    secret = re.search(r"pwk_[A-Za-z0-9_-]+", issued.text)
    assert secret is not None
    client.post(f"{PAGE}/route", data={"csrf_token": token(page), "phase": "detection/test", "queue": "lab"})
    assert "organizers’ own workers" not in client.get("/c/svident-code").text  # nothing waits
    upload(client, db)
    with db.session() as session:  # it came 7 minutes ago
        session.execute(update(CodeRun).values(created_at=utcnow() - timedelta(minutes=7)))
        session.commit()
    said = client.get("/c/svident-code").text
    assert "1 submission waits for the organizers’ own workers" in said and "waited 7 minutes" in said, said
    # A worker calls in: the competition is served again.
    assert client.post(f"{WORKER}/claim", headers=bearer(secret.group(0))).json()["run"] is not None
    assert "organizers’ own workers" not in client.get("/c/svident-code").text
