"""A competition's own queue, in one process: organizers create it and its credentials, a code phase sends its
runs there, and the protocol a remote worker speaks (claim, links, heartbeat, result) holds the same guarantees as
the platform's workers: the platform's own pool never takes such a run, a forged, foreign or replayed lease is
refused, a worker whose lease was taken over changes nothing, and a revoked credential is refused at once."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.storage.db import Database
from app.storage.models import CodeRun, WorkerCredential
from app.storage.types import utcnow
from tests.app.test_code_runs import ALL_ZERO, EXAMPLE, PHASE, create, program, used
from tests.app.web.test_api import auth

QUEUES = "/api/v1/competitions/svident-code/queues"
WORKER = "/api/v1/worker"


def make_queue(client: TestClient, db: Database, name: str = "lab") -> str:
    """A queue with the phase routed to it; returns a credential's secret."""
    olga = auth(db, "olga")
    made = client.post(QUEUES, headers=olga, json={"name": name})
    assert made.status_code == 201, made.text
    routed = client.put(f"{PHASE}/queue", headers=olga, json={"queue": name})
    assert routed.status_code == 200 and routed.json() == {"queue": name, "scoring": False}, routed.text
    issued = client.post(f"{QUEUES}/{name}/credentials", headers=olga, json={"label": "gpu box"})
    assert issued.status_code == 201, issued.text
    secret = issued.json()["credential"]
    assert isinstance(secret, str) and secret.startswith("pwk_")
    return secret


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def upload(client: TestClient, db: Database) -> int:
    answer = client.post(
        f"{PHASE}/submissions",
        headers=auth(db, "ada"),
        files={"file": ("program.zip", program(ALL_ZERO), "application/zip")},
    )
    assert answer.status_code == 202, answer.text
    assert client.app.state.podium.queue.wait_idle(60)  # type: ignore[attr-defined]
    return int(answer.json()["id"])


def claimed(client: TestClient, secret: str) -> dict[str, Any]:
    answer = client.post(f"{WORKER}/claim", headers=bearer(secret))
    assert answer.status_code == 200, answer.text
    run = answer.json()["run"]
    assert run is not None
    return dict(run)


def predictions(inputs: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(inputs)) as archive:
        rows = csv.DictReader(io.StringIO(archive.read("inputs.tsv").decode()), delimiter="\t")
        return json.dumps({row["uuid"]: "0" for row in rows}).encode()


def send_result(
    client: TestClient, secret: str, run: dict[str, Any], data: bytes | None, lease: str = "", **report: Any
) -> Any:
    files: dict[str, Any] = {"stdout": ("stdout", b"ran\n"), "stderr": ("stderr", b"")}
    if data is not None:
        files["predictions"] = ("predictions.json", data)
    form = {"lease": lease or run["lease"], "report": json.dumps({"exit_code": 0, "wall_seconds": 0.5, **report})}
    return client.post(f"{WORKER}/runs/{run['run_id']}/result", headers=bearer(secret), data=form, files=files)


def test_organizers_create_queues_and_credentials_that_are_shown_once(db: Database, client: TestClient) -> None:
    create(db)
    secret = make_queue(client, db)
    olga = auth(db, "olga")
    listed = client.get(QUEUES, headers=olga).json()["queues"]
    assert [(q["name"], q["phases"], q["waiting"], q["live"]) for q in listed] == [
        ("lab", ["detection/test"], 0, False)
    ]
    (credential,) = listed[0]["credentials"]
    assert credential["label"] == "gpu box" and "credential" not in credential
    assert secret not in json.dumps(listed)
    with db.session() as session:  # only a hash is kept
        assert session.scalar(select(WorkerCredential.key_hash)) != secret
    assert client.post(QUEUES, headers=olga, json={"name": "lab"}).status_code == 409
    assert client.post(QUEUES, headers=olga, json={"name": "Not A Name"}).status_code == 422
    for refused in (auth(db, "ada"), {}):
        assert client.get(QUEUES, headers=refused).status_code in (401, 403)
        assert client.post(f"{QUEUES}/lab/credentials", headers=refused, json={}).status_code in (401, 403)
        assert client.put(f"{PHASE}/queue", headers=refused, json={"queue": None}).status_code in (401, 403)


def test_a_remote_worker_runs_the_queues_run_and_the_platform_scores_it(db: Database, client: TestClient) -> None:
    create(db)
    secret = make_queue(client, db)
    submission = upload(client, db)
    # The platform's own pool left it alone.
    waiting = client.get(f"/api/v1/submissions/{submission}", headers=auth(db, "ada")).json()
    assert waiting["status"] == "awaiting_run" and waiting["code_run"]["status"] == "queued", waiting
    assert waiting["code_run"]["waiting_for"] == "the organizers' own workers", waiting
    organizers_see = client.get(f"/api/v1/submissions/{submission}", headers=auth(db, "olga")).json()
    assert organizers_see["code_run"]["waiting_for"] == "the organizers' own workers: queue lab"
    assert client.get(f"{QUEUES}/lab", headers=auth(db, "olga")).json()["waiting"] == 1
    run = claimed(client, secret)
    assert run["code"]["output"] == "predictions.json" and run["lease_seconds"] > 0
    program_zip = client.get(run["program_url"])
    assert program_zip.status_code == 200
    sent = zipfile.ZipFile(io.BytesIO(program(ALL_ZERO))).read("predict.py")
    assert zipfile.ZipFile(io.BytesIO(program_zip.content)).read("predict.py") == sent
    inputs = client.get(run["inputs_url"]).content
    assert zipfile.ZipFile(io.BytesIO(inputs)).namelist() == ["inputs.tsv"]  # never the gold
    assert "label" not in zipfile.ZipFile(io.BytesIO(inputs)).read("inputs.tsv").decode().splitlines()[0]
    # What it runs is on the queue's page; a heartbeat renews the lease.
    shown = client.get(f"{QUEUES}/lab", headers=auth(db, "olga")).json()
    assert shown["credentials"][0]["running"] == [run["run_id"]] and shown["credentials"][0]["live"] is True
    beat = client.post(f"{WORKER}/runs/{run['run_id']}/heartbeat", headers=bearer(secret), json={"lease": run["lease"]})
    assert beat.status_code == 200, beat.text
    done = send_result(client, secret, run, predictions(inputs))
    assert done.status_code == 200 and done.json()["status"] == "succeeded", done.text
    assert client.app.state.podium.queue.wait_idle(60)  # type: ignore[attr-defined]
    scored = client.get(f"/api/v1/submissions/{submission}", headers=auth(db, "ada")).json()
    assert scored["status"] == "scored" and "f1" in scored["metrics"], scored
    assert used(client, auth(db, "ada")) == 1
    # A replayed result, heartbeat or link finds the run finished.
    again = send_result(client, secret, run, predictions(inputs))
    assert again.status_code == 409 and again.json()["error"] == "lease_lost", again.text
    assert client.get(run["program_url"]).status_code == 409
    assert client.post(f"{WORKER}/claim", headers=bearer(secret)).json() == {"run": None, "scoring": None}


def test_forged_and_taken_over_leases_are_refused(db: Database, client: TestClient) -> None:
    create(db)
    first = make_queue(client, db)
    issued = client.post(f"{QUEUES}/lab/credentials", headers=auth(db, "olga"), json={"label": "second"}).json()
    second = issued["credential"]
    upload(client, db)
    run = claimed(client, first)
    run_id, attempt, signature = run["lease"].split(".")
    forged = f"{run_id}.{attempt}.{'0' * len(signature)}"
    refused = send_result(client, first, run, b"{}", lease=forged)
    assert refused.status_code == 403 and refused.json()["error"] == "not_your_lease", refused.text
    # Another worker's lease is not this one's, even for the same run.
    assert send_result(client, second, run, b"{}").status_code == 403
    assert client.get(f"{WORKER}/files/not-a-link").status_code == 403
    # The first worker goes silent; after its lease the second takes the run over (a new attempt).
    with db.session() as session:
        session.execute(update(CodeRun).values(lease_expires_at=utcnow() - timedelta(seconds=1)))
        session.commit()
    taken = claimed(client, second)
    assert taken["run_id"] == run["run_id"] and taken["lease"] != run["lease"]
    late = send_result(client, first, run, b"{}")
    assert late.status_code == 409 and late.json()["error"] == "lease_lost", late.text
    beat = client.post(f"{WORKER}/runs/{run['run_id']}/heartbeat", headers=bearer(first), json={"lease": run["lease"]})
    assert beat.status_code == 409
    assert client.get(run["program_url"]).status_code == 409  # the old attempt's links are dead too
    inputs = client.get(taken["inputs_url"]).content
    assert send_result(client, second, taken, predictions(inputs)).json()["status"] == "succeeded"
    assert used(client, auth(db, "ada")) == 1


def test_revoked_and_rotated_credentials_are_refused_at_the_next_call(db: Database, client: TestClient) -> None:
    create(db)
    secret = make_queue(client, db)
    olga = auth(db, "olga")
    credential_id = client.get(f"{QUEUES}/lab", headers=olga).json()["credentials"][0]["id"]
    rotated = client.post(f"{QUEUES}/lab/credentials/{credential_id}/rotate", headers=olga)
    assert rotated.status_code == 201, rotated.text
    new = rotated.json()["credential"]
    refused = client.post(f"{WORKER}/claim", headers=bearer(secret))
    assert refused.status_code == 401 and refused.json()["error"] == "revoked", refused.text
    assert client.post(f"{WORKER}/claim", headers=bearer(new)).status_code == 200
    revoked = client.post(f"{QUEUES}/lab/credentials/{rotated.json()['id']}/revoke", headers=olga)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    assert client.post(f"{WORKER}/claim", headers=bearer(new)).status_code == 401
    assert client.post(f"{WORKER}/claim", headers=auth(db, "olga")).status_code == 401  # an API token is no credential
    assert client.post(f"{WORKER}/claim").status_code == 401


@pytest.mark.parametrize("back", [True])
def test_a_phase_moved_back_to_the_platform_has_its_waiting_runs_run_there(
    db: Database, client: TestClient, back: bool
) -> None:
    create(db)
    make_queue(client, db)
    submission = upload(client, db)
    assert client.get(f"{QUEUES}/lab", headers=auth(db, "olga")).json()["waiting"] == 1
    moved = client.put(f"{PHASE}/queue", headers=auth(db, "olga"), json={"queue": None})
    assert moved.status_code == 200 and moved.json() == {"queue": None, "scoring": False}
    assert client.app.state.podium.queue.wait_idle(120)  # type: ignore[attr-defined]
    scored = client.get(f"/api/v1/submissions/{submission}", headers=auth(db, "ada")).json()
    assert scored["status"] == "scored", scored


def test_a_run_that_needs_a_gpu_is_left_to_a_worker_of_the_queue_with_one(db: Database, client: TestClient) -> None:
    create(db, gpu=True)
    secret = make_queue(client, db)
    submission = upload(client, db)
    for body in ({"gpus": 0}, None):
        left = client.post(f"{WORKER}/claim", headers=bearer(secret), json=body)
        assert left.status_code == 200 and left.json() == {"run": None, "scoring": None}, left.text
    run = client.post(f"{WORKER}/claim", headers=bearer(secret), json={"gpus": 1}).json()["run"]
    assert run is not None and run["code"]["gpu"] is True
    inputs = client.get(run["inputs_url"]).content
    done = send_result(client, secret, run, predictions(inputs), device="GPU 0")
    assert done.status_code == 200 and done.json()["status"] == "succeeded", done.text
    assert client.app.state.podium.queue.wait_idle(60)  # type: ignore[attr-defined]
    shown = client.get(f"/api/v1/submissions/{submission}", headers=auth(db, "olga")).json()
    assert shown["status"] == "scored" and shown["code_run"]["device"] == "GPU 0", shown


def test_a_waiting_runs_place_is_its_place_in_its_own_queue(db: Database, client: TestClient) -> None:
    create(db)
    # Another competition's runs wait on the platform's queue for a GPU worker (this one has none).
    spec = load_bundle(EXAMPLE)
    task = spec.tasks[0]
    phase = task.phases[0]
    assert phase.code is not None
    phase = replace(phase, code=replace(phase.code, gpu=True))
    spec = replace(spec, slug="svident-gpu", organizers=("olga",), tasks=(replace(task, phases=(phase,)),))
    with db.session() as session:
        catalog.create_competition(session, spec)
        session.commit()
    other = client.post(
        "/api/v1/competitions/svident-gpu/tasks/detection/phases/test/submissions",
        headers=auth(db, "ada"),
        files={"file": ("program.zip", program(ALL_ZERO), "application/zip")},
    )
    assert other.status_code == 202, other.text
    make_queue(client, db)
    mine = upload(client, db)
    ada = auth(db, "ada")
    waits = client.get(f"/api/v1/submissions/{other.json()['id']}", headers=ada).json()
    assert (waits["status"], waits["queue_position"]) == ("awaiting_run", 1), waits
    # The run on the competition's own queue is the next its workers take, whatever waits on the platform's.
    shown = client.get(f"/api/v1/submissions/{mine}", headers=ada).json()
    assert (shown["status"], shown["queue_position"]) == ("awaiting_run", 1), shown


def test_a_worker_whose_sandbox_fails_puts_the_run_back_uncounted(db: Database, client: TestClient) -> None:
    create(db)
    secret = make_queue(client, db)
    submission = upload(client, db)
    run = claimed(client, secret)
    back = send_result(client, secret, run, None, cannot_run="no user namespaces here")
    assert back.status_code == 200 and back.json()["status"] == "queued", back.text
    waiting = client.get(f"/api/v1/submissions/{submission}", headers=auth(db, "ada")).json()
    assert waiting["status"] == "awaiting_run" and waiting["code_run"]["status"] == "queued", waiting
    again = claimed(client, secret)
    assert again["run_id"] == run["run_id"] and again["lease"].split(".")[1] == "1"  # the attempt was not counted
    inputs = client.get(again["inputs_url"]).content
    assert send_result(client, secret, again, predictions(inputs)).json()["status"] == "succeeded"
    assert used(client, auth(db, "ada")) == 1
