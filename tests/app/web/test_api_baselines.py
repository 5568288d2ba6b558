"""The baseline endpoints: the registry, and runs that only the competition's organizers start and see;
participants see nothing of a run but its scores on the leaderboard."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.storage.db import Database
from tests.app.labels_baselines import NAME, REFUSAL
from tests.app.services.baselines.test_runs import setup
from tests.app.web.test_api import PHASE, auth, wait
from tests.app.worker.test_baseline_job import eventually

RUNS = f"{PHASE}/baseline-runs"


def start(client: TestClient, headers: dict[str, str], **options: Any) -> Any:
    return client.post(RUNS, headers=headers, json={"baseline": NAME, "options": options})


def test_the_registry_is_public_and_can_be_filtered_by_scorer(client: TestClient, system: Any) -> None:
    everything = client.get("/api/v1/baselines")
    assert everything.status_code == 200
    assert {"svident-tfidf-lr", "famus-sv-lemma", NAME} <= {b["name"] for b in everything.json()["baselines"]}
    (only,) = client.get("/api/v1/baselines", params={"scorer": "test-labels"}).json()["baselines"]
    assert (only["name"], only["version"], only["title"], only["wants_gpu"]) == (
        NAME,
        "2",
        "Copy the training labels",
        False,
    )
    assert only["options"][3] == {"name": "steps", "default": 0, "meaning": "slow steps (10 ms each) before answering"}


def test_an_organizers_run_ends_as_a_marked_leaderboard_row(client: TestClient, db: Database, system: Any) -> None:
    setup(db)
    olga, ada = auth(db, "olga"), auth(db, "ada")
    started = start(client, olga)
    assert started.status_code == 202, started.text
    assert (started.json()["status"], started.json()["requested_by"]) == ("queued", "olga")
    wait(client)
    run = client.get(f"/api/v1/baseline-runs/{started.json()['id']}", headers=olga).json()
    assert (run["status"], run["progress"]["done"], run["progress"]["total"]) == ("succeeded", 4, 4)
    assert [r["id"] for r in client.get(RUNS, headers=olga).json()["runs"]] == [run["id"]]

    (entry,) = client.get(f"{PHASE}/leaderboard").json()["entries"]
    assert (entry["team"], entry["system"], entry["baseline"], entry["metrics"]) == (
        NAME,
        f"{NAME} 2",
        True,
        {"accuracy": 1.0},
    )
    # The organizers see the submission; a participant sees only the leaderboard's numbers.
    mine = client.get(f"/api/v1/submissions/{run['submission_id']}", headers=olga).json()
    assert (mine["baseline"], mine["team"], mine["method_name"]) == (True, NAME, "Copy the training labels")
    assert client.get(f"/api/v1/submissions/{run['submission_id']}", headers=ada).status_code == 404
    assert client.get(f"{PHASE}/submissions", headers=ada).json() == {"submissions": []}


def test_participants_and_other_organizers_get_nothing_of_a_run(client: TestClient, db: Database, system: Any) -> None:
    setup(db)
    run_id = start(client, auth(db, "olga"), steps=1).json()["id"]
    wait(client)
    for who in ("ada", "oscar"):
        headers = auth(db, who)
        refused = start(client, headers)
        assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")
        assert client.get(RUNS, headers=headers).status_code == 403
        assert client.get(f"/api/v1/baseline-runs/{run_id}", headers=headers).status_code == 404
        assert client.post(f"/api/v1/baseline-runs/{run_id}/cancel", headers=headers).status_code == 404
    assert client.get(RUNS).status_code == 401
    assert client.get(f"/api/v1/baseline-runs/{run_id}").status_code == 401


@pytest.mark.parametrize(
    ("body", "code", "where"),
    [
        ({"baseline": "nope"}, "unknown_baseline", "baseline"),
        ({"baseline": "famus-sv-lemma"}, "invalid_input", "baseline"),
        ({"baseline": NAME, "options": {"steps": "many"}}, "invalid_options", "options"),
        ({"options": {}}, "invalid_request", "body.baseline"),
    ],
)
def test_a_refused_start_says_why(
    client: TestClient, db: Database, system: Any, body: dict[str, Any], code: str, where: str
) -> None:
    setup(db)
    refused = client.post(RUNS, headers=auth(db, "olga"), json=body)
    assert (refused.status_code, refused.json()["error"], refused.json()["problems"][0]["where"]) == (422, code, where)


def test_a_failing_run_shows_its_error_to_organizers_only(client: TestClient, db: Database, system: Any) -> None:
    setup(db)
    olga, ada = auth(db, "olga"), auth(db, "ada")
    run_id = start(client, olga, refuse=True).json()["id"]
    wait(client)
    run = client.get(f"/api/v1/baseline-runs/{run_id}", headers=olga).json()
    assert (run["status"], run["error"], run["submission_id"]) == ("failed", REFUSAL, None)
    answer = client.get(f"/api/v1/baseline-runs/{run_id}", headers=ada)
    assert answer.status_code == 404
    assert REFUSAL not in answer.text
    assert client.get(f"{PHASE}/leaderboard").json()["entries"] == []


def test_an_organizer_cancels_a_running_run(client: TestClient, db: Database, system: Any) -> None:
    setup(db)
    olga = auth(db, "olga")
    run_id = start(client, olga, steps=100_000).json()["id"]
    url = f"/api/v1/baseline-runs/{run_id}"
    eventually(lambda: client.get(url, headers=olga).json()["progress"]["done"] > 0, "the run's first report")
    asked = client.post(f"{url}/cancel", headers=olga)
    assert (asked.status_code, asked.json()["cancel_requested"]) == (202, True)
    wait(client)
    assert client.get(url, headers=olga).json()["status"] == "cancelled"
    again = client.post(f"{url}/cancel", headers=olga)
    assert (again.status_code, again.json()["error"]) == (409, "conflict")
