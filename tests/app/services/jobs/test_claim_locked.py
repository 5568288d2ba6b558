"""A waiting row that another transaction holds for a moment is claimed once it is let go, not skipped for good: on
PostgreSQL an organizer's refused rescore keeps its lock on the row until its request ends, and a worker that gave
up on the row then left it queued with no message until the sweeper's next pass."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, text

from app.config import Settings
from app.main import create_app
from app.services.jobs.claiming import claim_first, eligible
from app.services.jobs.routing import on_platform
from app.storage.db import Database
from app.storage.models import Submission
from app.storage.types import utcnow
from tests.app.builders import HALF, PASSWORD, as_bytes, make_competition, make_user
from tests.app.labels_scorer import LabelScorer

PHASE = "/api/v1/competitions/comp/tasks/labels/phases/dev"


def test_a_row_locked_for_a_moment_is_claimed_once_let_go(
    db: Database, tmp_path: Path, labels: type[LabelScorer]
) -> None:
    if db.engine.dialect.name != "postgresql":
        pytest.skip("row locks that a claim skips are PostgreSQL's (SQLite locks the whole database)")
    with db.session() as session:
        make_user(session, "ann")
        make_competition(session)
        session.commit()
    # No scoring pool: the upload waits, queued.
    with TestClient(create_app(Settings(database_url=db.url, workers=0, data_dir=tmp_path))) as client:
        login = client.post("/api/v1/tokens", json={"name": "ann", "password": PASSWORD})
        headers = {"Authorization": f"Bearer {login.json()['token']}"}
        upload = client.post(
            f"{PHASE}/submissions", headers=headers, files={"file": ("run.json", as_bytes(HALF), "application/json")}
        )
        assert upload.status_code == 202, upload.text
        submission_id = upload.json()["id"]

    holder = db.engine.connect()
    holder.begin()
    holder.execute(text("SELECT id FROM submissions WHERE id = :id FOR UPDATE"), {"id": submission_id})
    let_go = threading.Timer(0.2, holder.commit)
    let_go.start()
    try:
        with db.session() as session:
            now = utcnow()
            found = claim_first(
                session,
                Submission,
                now,
                eligible(Submission, submission_id, now),
                on_platform(Submission),
                lambda _session, row_id: row_id,
            )
    finally:
        let_go.join()
        holder.close()
    assert found == (submission_id, submission_id)
    with db.session(read_only=True) as session:
        assert session.scalar(select(Submission.status).where(Submission.id == submission_id)) == "queued"
