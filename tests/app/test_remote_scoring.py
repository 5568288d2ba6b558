"""Program scoring on a competition's own queue, in one process: a phase scored by its organizers' program sends
its scoring to the queue, the platform's own pool never scores its submissions, a worker of the queue receives the
submitted file and the gold through links good only while its attempt holds the submission, and what it reports is
stored as the platform's own scoring would store it (columns, sanitized details, who pays for a failure); forged,
foreign and replayed reports are refused, a lease taken over leaves the late worker nothing, and a phase moved
back is scored by the platform."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from app.config import Settings
from app.main import create_app
from app.storage.db import Database
from app.storage.models import Submission
from app.storage.types import utcnow
from codalab.program import TEAM_FAILURE
from tests.app.test_programs import PHASE, TRUTH, program_phase
from tests.app.web.test_api import auth, setup
from tests.codalab import tiny

QUEUES = "/api/v1/competitions/comp/queues"


@pytest.fixture
def program_client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as client:
        yield client


WORKER = "/api/v1/worker"


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def scoring_queue(client: TestClient, db: Database, *, credentials: int = 1) -> list[str]:
    olga = auth(db, "olga")
    assert client.post(QUEUES, headers=olga, json={"name": "lab"}).status_code == 201
    routed = client.put(f"{PHASE}/queue", headers=olga, json={"queue": "lab", "scoring": True})
    assert routed.status_code == 200 and routed.json() == {"queue": "lab", "scoring": True}, routed.text
    secrets = []
    for i in range(credentials):
        issued = client.post(f"{QUEUES}/lab/credentials", headers=olga, json={"label": f"box {i}"})
        secrets.append(issued.json()["credential"])
    return secrets


def send(client: TestClient, db: Database, data: bytes, who: str = "ada") -> dict[str, Any]:
    answer = client.post(
        f"{PHASE}/submissions", headers=auth(db, who), files={"file": ("r.zip", data, "application/zip")}
    )
    assert answer.status_code == 202, answer.text
    assert client.app.state.podium.queue.wait_idle(60)  # type: ignore[attr-defined]
    return dict(answer.json())


def shown(client: TestClient, db: Database, submission_id: int, who: str = "ada") -> dict[str, Any]:
    return dict(client.get(f"/api/v1/submissions/{submission_id}", headers=auth(db, who)).json())


def claim(client: TestClient, secret: str) -> dict[str, Any]:
    answer = client.post(f"{WORKER}/claim", headers=bearer(secret), json={"gpus": 0})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def report(client: TestClient, secret: str, job: dict[str, Any], body: dict[str, Any], **files: bytes) -> Any:
    return client.post(
        f"{WORKER}/scorings/{job['submission_id']}/result",
        headers=bearer(secret),
        data={"lease": job["lease"], "report": json.dumps(body)},
        files={"stdout": ("stdout", b"scoring 4 lines\n"), **{k: (k, v) for k, v in files.items()}},
    )


def used(client: TestClient, db: Database) -> int:
    again = client.post(
        f"{PHASE}/submissions",
        headers=auth(db, "ada"),
        files={"file": ("r.zip", tiny.result(TRUTH), "application/zip")},
    )
    assert again.status_code == 202, again.text
    return int(again.json()["quota"]["total_used"])


def test_a_remote_worker_scores_with_the_gold_it_is_given_and_the_platform_stores_its_scores(
    db: Database, program_client: TestClient
) -> None:
    setup(db, program_phase(), scorer="program", scorer_options=tiny.OPTIONS)
    (secret,) = scoring_queue(program_client, db)
    sent = send(program_client, db, tiny.result(["a", "b", "c", "a"]))
    # The platform's pool went idle without scoring it: it waits for the organizers' worker.
    assert shown(program_client, db, sent["id"])["status"] == "queued"
    # No worker of the queue called yet: the competition's page says the submission waits for one.
    assert "1 submission waits for the organizers’ own workers" in program_client.get("/c/comp").text
    job = claim(program_client, secret)
    assert job["run"] is None and job["scoring"]["submission_id"] == sent["id"]
    scoring = job["scoring"]
    assert scoring["scorer_options"] == tiny.OPTIONS and scoring["time_limit"] == 600
    gold = zipfile.ZipFile(io.BytesIO(program_client.get(scoring["gold_url"]).content))
    reference = zipfile.ZipFile(io.BytesIO(gold.read("reference.zip")))
    assert reference.read("truth.txt") == b"a\nb\na\nc"
    result = zipfile.ZipFile(io.BytesIO(program_client.get(scoring["submission_url"]).content))
    assert result.read("prediction.txt") == b"a\nb\nc\na"
    view = program_client.get(f"{QUEUES}/lab", headers=auth(db, "olga")).json()
    assert view["scoring_phases"] == ["labels/dev"] and view["credentials"][0]["scoring"] == [sent["id"]]
    beat = program_client.post(
        f"{WORKER}/scorings/{sent['id']}/heartbeat", headers=bearer(secret), json={"lease": scoring["lease"]}
    )
    assert beat.status_code == 200, beat.text
    body = {"scores": {"accuracy": 0.5, "lines": 4, "extra": 1.0}, "exit_code": 0, "wall_seconds": 0.2}
    html = b"<h2>Details</h2><p>2 right</p><script>alert(1)</script>"
    done = report(program_client, secret, scoring, body, detailed=html)
    assert done.status_code == 200 and done.json() == {"submission_id": sent["id"], "status": "scored"}, done.text
    scored = shown(program_client, db, sent["id"])
    assert scored["metrics"] == {"accuracy": 0.5, "lines": 4.0, "extra": 1.0}  # as the platform keeps them
    organizer = shown(program_client, db, sent["id"], "olga")["organizer"]["program_run"]
    assert organizer["stdout"] == "scoring 4 lines\n" and organizer["exit_code"] == 0
    assert "alert(1)" not in json.dumps(shown(program_client, db, sent["id"]))
    # The links die with the attempt: the gold is no longer given.
    gone = program_client.get(scoring["gold_url"])
    assert gone.status_code == 409 and gone.json()["error"] == "lease_lost", gone.text
    replayed = report(program_client, secret, scoring, body)
    assert replayed.status_code == 409 and replayed.json()["error"] == "lease_lost"
    board = program_client.get(f"{PHASE}/leaderboard").json()
    assert [(e["team"], e["metrics"]["accuracy"]) for e in board["entries"]] == [("ada", 0.5)]


def test_forged_and_foreign_reports_are_refused_and_a_code_runs_token_fetches_no_gold(
    db: Database, program_client: TestClient
) -> None:
    setup(db, program_phase(), scorer="program", scorer_options=tiny.OPTIONS)
    mine, other = scoring_queue(program_client, db, credentials=2)
    sent = send(program_client, db, tiny.result(TRUTH))
    scoring = claim(program_client, mine)["scoring"]
    forged = report(program_client, mine, {**scoring, "lease": f"{sent['id']}.1.{'0' * 64}"}, {"scores": {}})
    assert forged.status_code == 403 and forged.json()["error"] == "not_your_lease", forged.text
    foreign = report(program_client, other, scoring, {"scores": {"accuracy": 1.0, "lines": 4}})
    assert foreign.status_code == 403 and foreign.json()["error"] == "not_your_lease"
    nonsense = report(program_client, mine, scoring, {"scores": {"accuracy": "high"}})
    assert nonsense.status_code == 422 and nonsense.json()["problems"][0]["where"] == "report", nonsense.text
    tampered = program_client.get(scoring["gold_url"][:-3] + "abc")
    assert tampered.status_code == 403 and tampered.json()["error"] == "bad_link"
    assert shown(program_client, db, sent["id"])["status"] == "running"


def test_a_lease_taken_over_leaves_the_late_worker_nothing_and_quotas_stay_exact(
    db: Database, program_client: TestClient
) -> None:
    setup(db, program_phase(total_limit=3), scorer="program", scorer_options=tiny.OPTIONS)
    first, second = scoring_queue(program_client, db, credentials=2)
    sent = send(program_client, db, tiny.zip_of({"other.txt": b"a"}))
    late = claim(program_client, first)["scoring"]
    with db.session() as session:  # the first worker went silent: its lease ran out
        session.execute(
            update(Submission).where(Submission.id == sent["id"]).values(lease_expires_at=utcnow() - timedelta(1))
        )
        session.commit()
    taken = claim(program_client, second)["scoring"]
    assert taken["submission_id"] == sent["id"] and taken["lease"] != late["lease"]
    beat = program_client.post(
        f"{WORKER}/scorings/{sent['id']}/heartbeat", headers=bearer(first), json={"lease": late["lease"]}
    )
    assert beat.status_code == 409
    assert report(program_client, first, late, {"scores": {"accuracy": 1.0, "lines": 4}}).status_code == 409
    # The program failed on the team's file: the team pays, reads a plain sentence, organizers read the run.
    failed = report(
        program_client,
        second,
        taken,
        {"failure": "The scoring program failed on this submission.", "detail": "exit 3", "exit_code": 3},
        stderr=b"no prediction.txt in the submission\n",
    )
    assert failed.json()["status"] == "failed", failed.text
    assert shown(program_client, db, sent["id"])["message"] == TEAM_FAILURE  # the platform's words, not the worker's
    with db.session() as session:
        assert session.scalar(select(Submission.attempts).where(Submission.id == sent["id"])) == 2
    # A program that cannot run as stored is the platform's failure: given back.
    broken = send(program_client, db, tiny.result(TRUTH))
    job = claim(program_client, second)["scoring"]
    assert report(program_client, second, job, {"problem": "no metadata"}).json()["status"] == "failed"
    assert "problem on our side" in shown(program_client, db, broken["id"])["message"]
    # A worker whose sandbox cannot run programs gives the submission back, its attempt not counted.
    job = claim(program_client, second)["scoring"]
    assert job is None
    assert used(program_client, db) == 2  # the failed one counted, the broken one was given back
    queued = claim(program_client, second)["scoring"]
    assert report(program_client, second, queued, {"cannot_run": "no bubblewrap"}).json()["status"] == "queued"
    with db.session() as session:
        row = session.get(Submission, queued["submission_id"])
        assert row is not None and (row.status, row.attempts) == ("queued", 0)


def test_routing_scoring_is_for_program_phases_and_moving_back_lets_the_platform_score(
    db: Database, program_client: TestClient
) -> None:
    setup(db, program_phase(), scorer="program", scorer_options=tiny.OPTIONS)
    olga = auth(db, "olga")
    assert program_client.post(QUEUES, headers=olga, json={"name": "lab"}).status_code == 201
    no_code = program_client.put(f"{PHASE}/queue", headers=olga, json={"queue": "lab"})
    assert no_code.status_code == 409 and "scoring: true" in no_code.json()["detail"], no_code.text
    wrong = program_client.put(f"{PHASE}/queue", headers=olga, json={"queue": "lab", "scoring": "yes please"})
    assert wrong.status_code == 422
    routed = program_client.put(f"{PHASE}/queue", headers=olga, json={"queue": "lab", "scoring": True})
    assert routed.status_code == 200
    sent = send(program_client, db, tiny.result(TRUTH))
    assert shown(program_client, db, sent["id"])["status"] == "queued"
    back = program_client.put(f"{PHASE}/queue", headers=olga, json={"queue": None})
    assert back.status_code == 200 and back.json() == {"queue": None, "scoring": False}
    assert program_client.app.state.podium.queue.wait_idle(60)  # type: ignore[attr-defined]
    assert shown(program_client, db, sent["id"])["metrics"] == {"accuracy": 1.0, "lines": 4.0}


def test_deleting_the_queue_gives_what_its_worker_holds_back_to_the_platform_at_once(
    db: Database, program_client: TestClient
) -> None:
    setup(db, program_phase(total_limit=2), scorer="program", scorer_options=tiny.OPTIONS)
    (secret,) = scoring_queue(program_client, db)
    sent = send(program_client, db, tiny.result(TRUTH))
    held = claim(program_client, secret)["scoring"]
    assert held["submission_id"] == sent["id"]
    refused = program_client.delete(f"{QUEUES}/lab", headers=auth(db, "ada"))
    assert refused.status_code == 403
    deleted = program_client.delete(f"{QUEUES}/lab", headers=auth(db, "olga"))
    assert deleted.status_code == 200 and deleted.json() == {"deleted": "lab", "phases": ["labels/dev"]}
    assert program_client.app.state.podium.queue.wait_idle(60)  # type: ignore[attr-defined]
    # The platform scored it at once (no lease to wait out), once; the worker's late report is refused.
    assert shown(program_client, db, sent["id"])["metrics"] == {"accuracy": 1.0, "lines": 4.0}
    late = report(program_client, secret, held, {"scores": {"accuracy": 0.0, "lines": 4}})
    assert late.status_code == 401 and late.json()["error"] == "bad_credential", late.text
    assert program_client.get(held["gold_url"]).status_code == 409
    with db.session() as session:
        row = session.get(Submission, sent["id"])
        assert row is not None and row.attempts == 1 and not str(row.worker).startswith("remote:")
    assert used(program_client, db) == 2
    assert program_client.get(f"{QUEUES}/lab", headers=auth(db, "olga")).status_code == 404
    gone = program_client.delete(f"{QUEUES}/lab", headers=auth(db, "olga"))
    assert gone.status_code == 404 and "has no queue named 'lab'" in gone.json()["detail"]


def test_the_queues_page_sends_a_program_phases_scoring_to_a_queue(db: Database, program_client: TestClient) -> None:
    from tests.app.web.test_pages import login, token

    setup(db, program_phase(), scorer="program", scorer_options=tiny.OPTIONS)
    login(program_client, "olga")
    page = program_client.get("/c/comp/organize/queues")
    assert "No phase of this competition runs code or a scoring program" not in page.text
    program_client.post("/c/comp/organize/queues", data={"csrf_token": token(page), "name": "lab"})
    routed = program_client.post(
        "/c/comp/organize/queues/route",
        data={"csrf_token": token(page), "phase": "labels/dev", "queue": "lab", "scoring": "on"},
        follow_redirects=True,
    )
    assert "The runs and scoring of labels/dev go to queue lab now." in routed.text
    assert "scored here: labels/dev" in routed.text and 'name="scoring" value="on" checked' in routed.text
    view = program_client.get(f"{QUEUES}/lab", headers=auth(db, "olga")).json()
    assert view["scoring_phases"] == ["labels/dev"]
    # Without the box, a program phase that runs no code cannot go to a queue: the page says why.
    refused = program_client.post(
        "/c/comp/organize/queues/route", data={"csrf_token": token(page), "phase": "labels/dev", "queue": "lab"}
    )
    assert refused.status_code == 409 and "scoring: true" in refused.text
