"""The database unreachable for a while (a proxy between Podium and PostgreSQL is cut, then restored):
requests get a 503 naming the database and leave nothing behind, a job that arrives meanwhile is
retried with backoff and scored once the database is back."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from app.config import Settings
from app.services.accounts.users import find_user
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import SCORE_SUBMISSION
from app.services.submissions import intake
from app.services.submissions.limits import Limits
from app.storage.db import Database
from app.storage.models import Blob, Score, Submission
from app.storage.types import utcnow
from app.worker.celery_app import make_celery
from app.worker.celery_queue import CeleryQueue
from tests.app.builders import HALF, PERFECT, as_bytes
from tests.app.distributed.cluster import TcpProxy, wait_for
from tests.app.distributed.conftest import PHASE, Cluster, setup_competition
from tests.app.labels_scorer import LabelScorer

pytestmark = pytest.mark.slow


@pytest.fixture
def proxy(pg: Database) -> Iterator[TcpProxy]:
    url = make_url(pg.url)
    relay = TcpProxy((url.host or "127.0.0.1", url.port or 5432))
    yield relay
    relay.close()


def via(proxy: TcpProxy, database_url: str) -> str:
    return make_url(database_url).set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)


def counts(db: Database) -> tuple[int, int, int]:
    """Submissions, blobs and scores in the database (read directly, not through the proxy)."""
    with db.session(read_only=True) as session:
        found = [session.scalar(select(func.count()).select_from(table)) or 0 for table in (Submission, Blob, Score)]
    return found[0], found[1], found[2]


@pytest.mark.timeout(300)
def test_requests_get_a_503_and_jobs_wait_for_the_database(
    pg: Database,
    cluster: Cluster,
    proxy: TcpProxy,
    labels: type[LabelScorer],
    web: Callable[[Settings], TestClient],
) -> None:
    ada = setup_competition(pg)
    proxied = via(proxy, pg.url)
    # Retries: 0.2, 0.4, 0.8, then 1 s each, 15 in all: the job outlasts an outage of a few seconds.
    worker = cluster.worker("--queues", "scoring", "--concurrency", "1", database_url=proxied).wait_ready()
    client = web(cluster.app_settings(database_url=proxied))
    files = {"file": ("run.json", as_bytes(HALF), "application/json")}
    before = client.post(f"{PHASE}/submissions", headers=ada, files=files)
    assert before.status_code == 202, before.text

    # A submission stored before the outage whose message (in flight, so no sweeper sends it) reaches
    # the worker while the database is away.
    with pg.session() as session:
        settings = cluster.app_settings()
        limits = Limits(settings.max_upload_bytes, settings.max_unzipped_bytes, settings.max_zip_entries)
        upload = intake.Upload(as_bytes(PERFECT), "late.json")
        accepted = intake.submit(
            session, find_user(session, "ada"), ("comp", "labels", "dev"), upload, limits=limits, gold_cache=GoldCache()
        )
        accepted.submission.enqueued_at = utcnow()
        session.commit()
        late = accepted.submission.id
    wait_for(lambda: counts(pg)[2] == 1, 60, "the first upload to be scored")
    stored = counts(pg)

    proxy.cut()
    refused = client.post(f"{PHASE}/submissions", headers=ada, files=files)
    assert refused.status_code == 503
    assert refused.json()["error"] == "database_unavailable"
    assert "nothing was changed" in refused.json()["detail"]
    assert int(refused.headers["Retry-After"]) > 0
    assert client.get(f"/api/v1/submissions/{before.json()['id']}", headers=ada).status_code == 503
    ready = client.get("/readyz")
    assert (ready.status_code, ready.json()["checks"]["database"]) == (503, "unreachable")
    assert "the database is unreachable" in ready.json()["detail"]

    sender = CeleryQueue(make_celery(cluster.app_settings()), pg, cluster.app_settings())
    try:
        assert sender.send(SCORE_SUBMISSION, late)
    finally:
        sender.close()
    retrying = f"claiming submission {late} failed"
    wait_for(lambda: worker.output().count(retrying) >= 2, 60, "the worker to retry its claim")
    assert counts(pg) == (stored[0], stored[1], 1)  # the refused upload left nothing
    proxy.restore()

    wait_for(lambda: counts(pg)[2] == 2, 60, "the late submission to be scored")
    again = client.post(f"{PHASE}/submissions", headers=ada, files=files)
    assert again.status_code == 202, again.text
    wait_for(lambda: counts(pg)[2] == 3, 60, "the upload after the outage to be scored")
    with pg.session(read_only=True) as session:
        rows = session.execute(select(Submission.id, Submission.status, Submission.attempts)).all()
        per = dict(session.execute(select(Score.submission_id, func.count()).group_by(Score.submission_id)).all())
    assert {status for _, status, _ in rows} == {"scored"}
    assert per == {id_: 1 for id_, _, _ in rows}
    assert {id_: attempts for id_, _, attempts in rows}[late] == 1  # retried in the job, not re-claimed
