"""Files in object storage at scale: a real ``podium serve`` and ``podium worker`` share an S3 bucket (on the
test's S3-protocol server), and ``podium storage migrate`` moves a running site's files there while
uploads go on, losing none."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable

import boto3
import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.config import Settings
from app.storage.blob_migration import verify_blob
from app.storage.blobs import put_blob
from app.storage.db import Database
from app.storage.enums import StoreName
from app.storage.models import Blob, Submission
from app.storage.stores import BlobStores
from tests.app.builders import HALF, PERFECT, as_bytes
from tests.app.distributed.cluster import PODIUM, ROOT, ServeProcess, podium_env, wait_for
from tests.app.distributed.conftest import PHASE, Cluster, setup_competition
from tests.app.labels_scorer import LabelScorer


@pytest.fixture
def s3_cluster(cluster: Cluster) -> Cluster:
    if cluster.settings.get("PODIUM_BLOB_STORE") != "s3":
        pytest.skip("moto_server (pip install 'moto[server]') is not installed: no S3-protocol server to test against")
    return cluster


def bucket_object(cluster: Cluster, digest: str) -> bytes:
    client = boto3.session.Session().client("s3")  # the AWS variables point at the test server
    return client.get_object(Bucket=cluster.settings["PODIUM_S3_BUCKET"], Key=digest)["Body"].read()


def scored(db: Database) -> int:
    with db.session(read_only=True) as session:
        return session.scalar(select(func.count()).where(Submission.status == "scored")) or 0


def test_an_upload_through_a_served_site_lands_in_the_bucket_and_a_worker_scores_it_from_there(
    pg: Database, s3_cluster: Cluster, labels: type[LabelScorer]
) -> None:
    ada = setup_competition(pg)
    s3_cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    server = ServeProcess(podium_env(s3_cluster.settings), s3_cluster.tmp / "serve.log").wait_ready()
    try:
        data = as_bytes(HALF)
        answer = httpx.post(
            f"{server.url}{PHASE}/submissions", headers=ada, files={"file": ("run.json", data)}, timeout=60
        )
        assert answer.status_code == 202, answer.text
        wait_for(lambda: scored(pg) == 1, 60, "the submission to be scored")
    finally:
        server.stop()
    with pg.session(read_only=True) as session:
        submission = session.scalar(select(Submission))
        assert submission is not None
        blob = session.get(Blob, submission.blob_id)
        assert blob is not None
        assert (blob.store, session.scalar(select(Blob.data).where(Blob.id == blob.id))) == (StoreName.S3, None)
    assert bucket_object(s3_cluster, submission.sha256) == data


def test_podium_storage_migrate_moves_a_running_sites_files_to_the_bucket_while_uploads_go_on(
    pg: Database, s3_cluster: Cluster, labels: type[LabelScorer], web: Callable[[Settings], TestClient]
) -> None:
    ada = setup_competition(pg)  # its gold and files are rows of the database, as before blob stores
    with pg.session() as session:
        for n in range(40):
            put_blob(session, os.urandom(64 * 1024) + n.to_bytes(2, "big"))
        session.commit()
    s3_cluster.worker("--queues", "scoring", "--concurrency", "1").wait_ready()
    client = web(s3_cluster.app_settings())
    migrate = subprocess.Popen(
        [PODIUM, "storage", "migrate", "--to", "s3"],
        cwd=ROOT,
        env=podium_env(s3_cluster.settings),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    uploads = 0
    while migrate.poll() is None or uploads < 6:
        data = as_bytes(HALF if uploads % 2 else PERFECT)
        answer = client.post(f"{PHASE}/submissions", headers=ada, files={"file": (f"run{uploads}.json", data)})
        assert answer.status_code == 202, answer.text
        uploads += 1
    out, err = migrate.communicate(timeout=120)
    assert migrate.returncode == 0, err
    assert out.strip().splitlines()[-1].startswith("moved ")
    wait_for(lambda: scored(pg) == uploads, 120, f"{uploads} submissions to be scored")

    everywhere = Database(pg.url, blobs=BlobStores(StoreName.S3, s3_bucket=s3_cluster.settings["PODIUM_S3_BUCKET"]))
    try:
        with everywhere.session(read_only=True) as session:
            rows = session.execute(select(Blob.id, Blob.store)).all()
            assert session.scalar(select(func.count()).where(Blob.data.is_not(None))) == 0
        assert len(rows) >= 40 and {store for _, store in rows} == {StoreName.S3}
        assert all(verify_blob(everywhere, blob_id) for blob_id, _ in rows)
    finally:
        everywhere.dispose()
