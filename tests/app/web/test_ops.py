"""``/readyz``, ``/metrics``, the 503 answer when the database is unreachable, and a queued
submission's place in the queue."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.storage.db import Database
from tests.app.builders import HALF
from tests.app.distributed.cluster import free_port
from tests.app.labels_scorer import LabelScorer
from tests.app.web.test_api import PHASE, auth, setup, upload, wait


@pytest.fixture
def unreachable(tmp_path: Path) -> Iterator[TestClient]:
    """The app on a PostgreSQL address where nothing listens (nothing scores in this process)."""
    url = f"postgresql+psycopg://podium@127.0.0.1:{free_port()}/podium?connect_timeout=2"
    with TestClient(create_app(Settings(database_url=url, workers=0))) as client:
        yield client


def test_requests_get_a_503_naming_the_database(unreachable: TestClient) -> None:
    answer = unreachable.get("/api/v1/competitions")
    assert answer.status_code == 503
    assert answer.json() == {
        "error": "database_unavailable",
        "detail": "The database cannot be reached right now, so nothing was changed; please try again shortly.",
    }
    assert answer.headers["Retry-After"] == "5"
    ready = unreachable.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"] == {"database": "unreachable", "broker": "not configured"}
    assert ready.json()["detail"].startswith("the database is unreachable (OperationalError: ")
    assert unreachable.get("/healthz").status_code == 200  # the process itself is fine
    metrics = unreachable.get("/metrics")
    assert metrics.status_code == 200
    assert "podium_up_database 0.0" in metrics.text
    assert "podium_submissions{" not in metrics.text


def test_ready_when_the_database_answers_and_no_broker_is_configured(client: TestClient) -> None:
    ready = client.get("/readyz")
    assert (ready.status_code, ready.json()) == (
        200,
        {"status": "ready", "checks": {"database": "ok", "broker": "not configured"}},
    )


def test_not_ready_while_the_broker_is_unreachable(db: Database) -> None:
    settings = Settings(database_url=db.url, broker_url=f"redis://127.0.0.1:{free_port()}/0")
    with TestClient(create_app(settings)) as client:
        ready = client.get("/readyz")
        metrics = client.get("/metrics").text
    assert ready.status_code == 503
    assert ready.json()["checks"] == {"database": "ok", "broker": "unreachable"}
    assert "the broker is unreachable" in ready.json()["detail"]
    assert "podium_broker_up 0.0" in metrics


def test_metrics_report_statuses_queues_and_times(db: Database, client: TestClient) -> None:
    setup(db)
    assert upload(client, auth(db, "ada"), HALF).status_code == 202
    wait(client)
    metrics = client.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    lines = set(metrics.text.splitlines())
    expected = {
        "podium_up_database 1.0",
        'podium_submissions{status="queued"} 0.0',
        'podium_submissions{status="scored"} 1.0',
        'podium_queue_depth{queue="scoring"} 0.0',
        'podium_queue_depth{queue="gpu"} 0.0',
        "podium_upload_to_score_sample_size 1.0",
        "podium_scoring_workers 1.0",
        'podium_jobs_resumed_total{kind="score_submission"} 0.0',
        'podium_jobs_resent_total{kind="score_submission"} 0.0',
        'podium_jobs_resent_total{kind="run_baseline"} 0.0',
        "podium_broker_loss_detections_total 0.0",
    }
    assert expected <= lines
    assert any(line.startswith('podium_upload_to_score_seconds{quantile="0.99"} ') for line in lines)
    assert any(line.startswith('podium_scoring_seconds{scorer="test-labels"} ') for line in lines)


def test_a_queued_submission_shows_its_place(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    ada = auth(db, "ada")
    with TestClient(create_app(Settings(database_url=db.url, workers=0))) as idle:  # nothing scores
        first = upload(idle, ada, HALF).json()
        second = upload(idle, ada, HALF).json()
        assert (first["queue_position"], second["queue_position"]) == (1, 2)
        assert second["estimated_scored_at"] is None  # nothing was ever scored: no pace to go by
        listed = idle.get(f"{PHASE}/submissions", headers=ada).json()["submissions"]
        assert [s["queue_position"] for s in listed] == [2, 1]  # newest first
        assert idle.get(f"/api/v1/submissions/{first['id']}", headers=ada).json()["queue_position"] == 1


def test_metrics_count_the_jobs_a_restart_sent_again(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    ada = auth(db, "ada")
    with TestClient(create_app(Settings(database_url=db.url, workers=0))) as idle:  # nothing scores
        assert upload(idle, ada, HALF).status_code == 202
    with TestClient(create_app(Settings(database_url=db.url, workers=1))) as client:  # a restart
        wait(client)
        lines = set(client.get("/metrics").text.splitlines())
    assert {'podium_submissions{status="scored"} 1.0', 'podium_jobs_resent_total{kind="score_submission"} 1.0'} <= lines
