"""What a phase served by its competition's own queue says when no worker of that queue is live, through the pages
(HTML) and the API's phase answer: how many runs wait and for how long, and, for organizers, a button that moves the
phase back to the platform's workers. And deleting a queue on its page, after asking."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import update

from app.storage.db import Database
from app.storage.models import CodeRun, WorkerCredential
from app.storage.types import utcnow
from tests.app.test_code_runs import PHASE, create
from tests.app.test_worker_queues import QUEUES, WORKER, bearer, make_queue, upload
from tests.app.web.test_api import auth
from tests.app.web.test_pages import login, token

BOARD = "/c/svident-code/detection/test"
QUEUE_PAGE = "/c/svident-code/organize/queues"
SILENT = "none of them has called in for more than two minutes"
MOVE_BACK = "Move this phase back to the platform’s workers"


def own_workers(client: TestClient, db: Database) -> dict[str, object] | None:
    answer = client.get(PHASE, headers=auth(db, "ada"))
    assert answer.status_code == 200, answer.text
    found = answer.json()["own_workers"]
    assert found is None or isinstance(found, dict)
    return found


def test_a_phase_whose_queue_has_no_live_worker_says_so_and_its_organizers_can_move_it_back(
    db: Database, client: TestClient
) -> None:
    create(db)
    assert own_workers(client, db) is None  # the platform serves it
    secret = make_queue(client, db)
    said = own_workers(client, db)
    assert said is not None and (said["queue"], said["live"], said["waiting"]) == ("lab", False, 0)
    assert str(said["message"]).endswith("what is sent now waits until one does.")
    upload(client, db)
    with db.session() as session:  # it came 7 minutes ago
        session.execute(update(CodeRun).values(created_at=utcnow() - timedelta(minutes=7)))
        session.commit()
    said = own_workers(client, db)
    assert said is not None and said["waiting"] == 1 and 420 <= int(str(said["waited_seconds"])) < 480
    assert SILENT in str(said["message"]) and "1 run waits, the oldest for 7 minutes." in str(said["message"])
    # The team reads it on the submit page and the phase's page; only organizers get the button.
    login(client, "ada")
    submit = client.get(f"{BOARD}/submit").text
    assert SILENT in submit and "1 run waits, the oldest for 7 minutes" in submit and MOVE_BACK not in submit
    board = client.get(BOARD).text
    assert SILENT in board and MOVE_BACK not in board
    client.cookies.clear()
    assert SILENT in client.get(BOARD).text  # anonymous readers too
    # A worker calls in: the phase is served, nothing is said.
    assert client.post(f"{WORKER}/claim", headers=bearer(secret)).json()["run"] is not None
    assert own_workers(client, db) is None
    login(client, "olga")
    assert SILENT not in client.get(BOARD).text and SILENT not in client.get(f"{BOARD}/submit").text
    # It goes silent again; its organizer moves the phase back from the phase's own page.
    with db.session() as session:
        session.execute(update(WorkerCredential).values(last_contact_at=utcnow() - timedelta(minutes=5)))
        session.commit()
    page = client.get(BOARD)
    assert SILENT in page.text and MOVE_BACK in page.text
    moved = client.post(
        f"{QUEUE_PAGE}/route",
        data={"csrf_token": token(page), "phase": "detection/test", "queue": "", "back": BOARD},
        follow_redirects=False,
    )
    assert moved.status_code == 303 and moved.headers["location"] == BOARD, moved.text
    assert "go to the platform&#39;s workers now" in client.get(BOARD).text
    assert own_workers(client, db) is None
    assert client.get(f"{QUEUES}/lab", headers=auth(db, "olga")).json()["phases"] == []
    # The form returns only to the phase's own pages.
    elsewhere = client.post(
        f"{QUEUE_PAGE}/route",
        data={"csrf_token": token(page), "phase": "detection/test", "queue": "", "back": "https://example.org/"},
        follow_redirects=False,
    )
    assert elsewhere.status_code == 303 and elsewhere.headers["location"] == QUEUE_PAGE


def test_deleting_a_queue_on_its_page_asks_first_then_moves_its_phases_back_and_ends_its_credentials(
    db: Database, client: TestClient
) -> None:
    create(db)
    secret = make_queue(client, db)
    login(client, "olga")
    page = client.get(QUEUE_PAGE)
    assert 'aria-label="Delete queue lab"' in page.text
    asked = client.post(f"{QUEUE_PAGE}/lab/delete", data={"csrf_token": token(page)})
    assert asked.status_code == 200 and "Delete the queue lab?" in asked.text
    assert client.post(f"{WORKER}/claim", headers=bearer(secret)).status_code == 200  # nothing happened yet
    done = client.post(
        f"{QUEUE_PAGE}/lab/delete", data={"csrf_token": token(page), "confirmed": "yes"}, follow_redirects=True
    )
    text = done.text.replace("&#39;", "'")
    assert "Queue lab deleted: detection/test went back to the platform's workers." in text
    assert "Queue lab</h2>" not in text
    assert client.post(f"{WORKER}/claim", headers=bearer(secret)).status_code == 401
    assert client.get(f"{QUEUES}/lab", headers=auth(db, "olga")).status_code == 404
    login(client, "ada")
    assert client.post(f"{QUEUE_PAGE}/lab/delete", data={"csrf_token": token(page)}).status_code in (403, 404)
