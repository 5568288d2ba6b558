"""Storage quotas through the API: a competition's own team quota (a bundle key) and the operator's default
for the whole competition refuse, with a 413 naming the quota, what is used and the file's size, an upload
that does not fit, before anything of it is stored; two teams racing for the last bytes never both get them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from app.config import Settings
from app.main import create_app
from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.storage.db import Database
from app.storage.models import Blob, Competition, Submission
from tests.app.builders import HALF, PERFECT, as_bytes
from tests.app.labels_scorer import LabelScorer
from tests.app.services.bundles.test_loader import keys_of, make_bundle, write_bundle
from tests.app.web.test_api import PHASE, auth, setup
from tests.app.web.test_pages import login


def _counts(db: Database) -> tuple[int, int]:
    with db.session(read_only=True) as session:
        return session.scalar(select(func.count(Submission.id))) or 0, session.scalar(select(func.count(Blob.id))) or 0


def _send(client: TestClient, headers: dict[str, str], data: bytes) -> object:
    return client.post(f"{PHASE}/submissions", headers=headers, files={"file": ("run.json", data)})


def test_a_competitions_team_quota_refuses_what_does_not_fit_before_storing_it(
    db: Database, client: TestClient
) -> None:
    half, perfect = as_bytes(HALF), as_bytes(PERFECT)
    setup(db)
    with db.session() as session:
        session.execute(update(Competition).values(team_storage_quota_bytes=len(half) + len(perfect) - 1))
        session.commit()
    ada, bob = auth(db, "ada"), auth(db, "bob")
    assert _send(client, ada, half).status_code == 202  # type: ignore[attr-defined]
    before = _counts(db)

    refused = _send(client, ada, perfect)
    assert refused.status_code == 413, refused.text  # type: ignore[attr-defined]
    body = refused.json()  # type: ignore[attr-defined]
    assert body["error"] == "storage_quota_exceeded" and body["quota"] == "team"
    assert (body["limit_bytes"], body["used_bytes"], body["size_bytes"]) == (
        len(half) + len(perfect) - 1,
        len(half),
        len(perfect),
    )
    assert "team storage quota" in body["detail"]
    assert _counts(db) == before  # neither a submission nor the file's contents were stored
    # Another team has its own quota.
    assert _send(client, bob, perfect).status_code == 202  # type: ignore[attr-defined]


@pytest.fixture
def quota_client(db: Database, tmp_path: Path, labels: type[LabelScorer]) -> Iterator[TestClient]:
    setup(db)
    size = len(as_bytes(HALF))
    settings = Settings(
        database_url=db.url, workers=1, data_dir=tmp_path, lease_seconds=30, storage_quota_bytes=size + size // 2
    )
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def test_the_operators_competition_quota_admits_one_of_two_racing_teams(db: Database, quota_client: TestClient) -> None:
    half = as_bytes(HALF)
    ada, bob = auth(db, "ada"), auth(db, "bob")
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def race(headers: dict[str, str]) -> None:
        barrier.wait()
        statuses.append(_send(quota_client, headers, half).status_code)  # type: ignore[attr-defined]

    threads = [threading.Thread(target=race, args=(h,)) for h in (ada, bob)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [202, 413]
    assert _counts(db)[0] == 1
    refused = _send(quota_client, ada, half).json()  # type: ignore[attr-defined]
    assert (refused["quota"], refused["used_bytes"]) == ("competition", len(half))
    usage = quota_client.get("/api/v1/competitions/comp/usage", headers=auth(db, "olga")).json()
    assert (usage["quota_bytes"], usage["team_quota_bytes"], usage["quota_used_bytes"]) == (
        len(half) + len(half) // 2,
        None,
        len(half),
    )
    login(quota_client, "olga")
    page = quota_client.get("/c/comp/organize").text
    assert 'id="quotas"' in page and "no limit per team" in page


def test_a_bundle_sets_the_quotas(db: Database, tmp_path: Path) -> None:
    folder = write_bundle(tmp_path / "b", make_bundle(storage_quota_bytes=10_000_000, team_storage_quota_bytes=2000))
    with db.session() as session:
        competition, _ = catalog.create_competition(session, load_bundle(folder))
        assert (competition.storage_quota_bytes, competition.team_storage_quota_bytes) == (10_000_000, 2000)
    bad = write_bundle(tmp_path / "bad", make_bundle(team_storage_quota_bytes=-1))
    assert keys_of(bad) == ["team_storage_quota_bytes"]
