"""``Idempotency-Key`` on uploads, through the API (SQLite here, PostgreSQL too when configured):
the same key from the same user returns the first submission, never a second row or a second use of
the team's limit; another file or phase with the key is refused; keys expire after a day."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.services.accounts.users import find_user
from app.services.scoring.gold import GoldCache
from app.services.submissions import idempotency, intake
from app.services.submissions.limits import Limits
from app.storage.db import Database
from app.storage.models import Submission
from app.storage.types import utcnow
from tests.app.builders import HALF, PERFECT, as_bytes, phase_spec
from tests.app.web.test_api import PHASE, auth, setup

SECOND_PHASE = PHASE.replace("/phases/dev", "/phases/test")


def post(client: TestClient, headers: dict[str, str], run: Any, key: str | None, phase: str = PHASE) -> Any:
    files = {"file": ("run.json", as_bytes(run), "application/json")}
    keyed = {**headers, "Idempotency-Key": key} if key is not None else headers
    return client.post(f"{phase}/submissions", headers=keyed, files=files)


def rows(db: Database) -> int:
    with db.session(read_only=True) as session:
        return int(session.scalar(select(func.count()).select_from(Submission)) or 0)


def test_the_same_key_returns_the_first_submission(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(total_limit=2))
    ada = auth(db, "ada")
    first = post(client, ada, HALF, "upload-1")
    again = post(client, ada, HALF, "upload-1")
    assert (first.status_code, again.status_code) == (202, 202)
    assert again.json()["id"] == first.json()["id"]
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert again.json()["quota"]["total_used"] == 1  # counted once
    assert rows(db) == 1
    other = post(client, ada, HALF, "upload-2")  # a new key: a new upload
    assert other.status_code == 202 and other.json()["id"] != first.json()["id"]
    assert other.json()["quota"]["total_used"] == 2
    # The limit is used up, and a retry of an upload it counted is still answered with that upload.
    assert post(client, ada, HALF, "upload-2").json()["id"] == other.json()["id"]
    assert post(client, ada, HALF, "upload-3").status_code == 429
    assert rows(db) == 2


def test_a_key_with_another_file_or_phase_is_refused(db: Database, client: TestClient) -> None:
    setup(db, phase_spec("dev"), phase_spec("test"))
    ada = auth(db, "ada")
    assert post(client, ada, HALF, "k").status_code == 202
    for answer in (post(client, ada, PERFECT, "k"), post(client, ada, HALF, "k", SECOND_PHASE)):
        assert answer.status_code == 409
        assert answer.json()["error"] == "idempotency_key_reused"
    assert rows(db) == 1


def test_keys_belong_to_their_user_and_bad_keys_are_refused(db: Database, client: TestClient) -> None:
    setup(db)
    ada, bob = auth(db, "ada"), auth(db, "bob")
    mine = post(client, ada, HALF, "shared")
    theirs = post(client, bob, HALF, "shared")  # the same key from another user is another upload
    assert theirs.status_code == 202 and theirs.json()["id"] != mine.json()["id"]
    for bad in ("", "x" * 256, "caf\u00e9"):
        files = {"file": ("run.json", as_bytes(HALF), "application/json")}
        headers: dict[str, Any] = {**ada, "Idempotency-Key": bad.encode("utf-8")}
        answer = client.post(f"{PHASE}/submissions", headers=headers, files=files)
        assert answer.status_code == 422, bad
        assert answer.json()["problems"][0]["where"] == "Idempotency-Key"
    assert post(client, ada, HALF, None).status_code == 202  # no key: every upload is a new one
    assert rows(db) == 3


def test_a_key_names_its_upload_for_a_day(db: Database, labels: Any) -> None:
    setup(db)
    limits = Limits(1 << 20, 1 << 20, 4)
    t0 = utcnow()

    def submit(at: Any) -> intake.Accepted:
        with db.session() as session:
            ada = find_user(session, "ada")
            upload = intake.Upload(as_bytes(HALF), "run.json")
            ref = ("comp", "labels", "dev")
            accepted = intake.submit(session, ada, ref, upload, limits=limits, gold_cache=GoldCache(), now=at, key="k")
            session.commit()
            return accepted

    first = submit(t0)
    assert submit(t0 + idempotency.KEY_LIFETIME - timedelta(minutes=1)).submission.id == first.submission.id
    later = submit(t0 + idempotency.KEY_LIFETIME + timedelta(minutes=1))
    assert (later.replayed, later.submission.id != first.submission.id) == (False, True)
    assert rows(db) == 2
