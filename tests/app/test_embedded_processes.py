"""Several embedded ``podium serve`` processes on one database (docs/DEPLOYMENT.md): each runs its own scoring
pool, and a job is claimed through the database's lease, so every upload, whichever process took it, is scored
exactly once, and both processes serve the same board."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from app.services.accounts import users
from app.storage.db import Database
from app.storage.migrate import upgrade
from app.storage.models import Score, Submission
from tests.app.builders import HALF, as_bytes, make_competition, make_user
from tests.app.distributed.cluster import ServeProcess, podium_env, wait_for
from tests.app.distributed.conftest import PHASE
from tests.app.labels_scorer import LabelScorer

UPLOADS = 8


@pytest.fixture
def site(tmp_path: Path, labels: type[LabelScorer]) -> Iterator[tuple[Database, list[ServeProcess], dict[str, str]]]:
    url = f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    database = Database(url)
    upgrade(database.engine)
    with database.session() as session:
        make_user(session, "olga", organizer=True)
        ada = make_user(session, "ada")
        make_competition(session, organizers=("olga",))
        token = users.issue_token(session, ada)
        session.commit()
    settings = {
        "PODIUM_DATABASE_URL": url,
        "PODIUM_PLUGINS": "tests.app.plugins.labels",
        "PODIUM_SECRET_KEY": secrets.token_hex(32),
        "PODIUM_WORKERS": "1",
        "PODIUM_BLOB_STORE": "disk",
        "PODIUM_BLOB_DIR": str(tmp_path / "blobs"),
        "PODIUM_BOARD_CHECK_SECONDS": "0",
    }
    servers: list[ServeProcess] = []
    try:
        for n in (1, 2):
            servers.append(ServeProcess(podium_env(settings), tmp_path / f"serve{n}.log").wait_ready())
        yield database, servers, {"Authorization": f"Bearer {token}"}
    finally:
        for server in servers:
            server.stop()
        database.dispose()


def test_embedded_processes_on_one_database_score_each_upload_once(
    site: tuple[Database, list[ServeProcess], dict[str, str]],
) -> None:
    database, servers, ada = site
    sent = []
    for n in range(UPLOADS):
        server = servers[n % 2]
        answer = httpx.post(
            f"{server.url}{PHASE}/submissions", headers=ada, files={"file": (f"run{n}.json", as_bytes(HALF))}
        )
        assert answer.status_code == 202, answer.text
        sent.append(answer.json()["id"])

    def scored() -> int:
        with database.session(read_only=True) as session:
            return session.scalar(select(func.count()).where(Submission.status == "scored")) or 0

    wait_for(lambda: scored() == UPLOADS, 120, f"{UPLOADS} submissions to be scored")
    with database.session(read_only=True) as session:
        attempts = session.scalars(select(Submission.attempts).where(Submission.id.in_(sent))).all()
        scores = session.scalar(select(func.count()).select_from(Score))
    assert (sorted(attempts), scores) == ([1] * UPLOADS, UPLOADS)
    boards = [httpx.get(f"{server.url}{PHASE}/leaderboard", headers=ada).json()["entries"] for server in servers]
    assert boards[0] == boards[1]
    assert [entry["scored_submissions"] for entry in boards[0]] == [UPLOADS]
