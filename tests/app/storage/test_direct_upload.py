"""Direct uploads (``services.submissions.direct``) through a real ``podium serve`` whose files are in a bucket of
moto's S3 server, with the real ``podium submit``: the file goes from the client to the bucket through presigned
part links, is read back and checked, and ends as the submission an ordinary upload of it makes; an altered or
incomplete upload is refused and leaves nothing, a quota refuses before any link is handed out, and an upload
never completed is removed by the sweeper's cleaning."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pty
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import boto3
import httpx
import pytest
from sqlalchemy.orm import Session

from app.services.accounts import users
from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.storage.collect import abandoned_direct_uploads
from app.storage.db import Database
from app.storage.direct import STAGING, DirectUploads
from app.storage.enums import StoreName
from app.storage.migrate import upgrade
from app.storage.s3 import S3Store
from app.storage.stores import BlobStores
from app.storage.types import utcnow
from tests.app.s3server import S3Server
from tests.app.web.browser import podium_command, serving
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "classification"
REF = "classification-example/sentiment/test"
TIGHT = "tight/sentiment/test"
MIB = 1024 * 1024


def seeded(url: str, tokens: Path) -> None:
    """The example competition and a tight one on a migrated database at ``url``; tokens written in ``tokens``."""
    database = Database(url)
    upgrade(database.engine)
    with database.session() as session:
        _seed(session, tokens)
        session.commit()
    database.dispose()


def _seed(session: Session, tokens: Path) -> None:
    spec = load_bundle(EXAMPLE)
    olga = users.create_user(session, "olga", "olga-password-1", is_organizer=True)
    catalog.create_competition(session, replace(spec, organizers=(olga.name,)))
    # A competition whose teams may keep 100 bytes: every real file is over it.
    catalog.create_competition(
        session, replace(spec, slug="tight", organizers=(olga.name,), team_storage_quota_bytes=100)
    )
    for name in ("ada", "bob", "cyd"):
        user = users.create_user(session, name, f"{name}-password-1")
        (tokens / name).write_text(users.issue_token(session, user))


@pytest.fixture
def bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)
    return s3_server.new_bucket()


@pytest.fixture
def site(tmp_path: Path, bucket: str) -> Iterator[tuple[str, dict[str, str]]]:
    """A server keeping its files in ``bucket``; its URL and the participants' tokens."""
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    url = f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    seeded(url, tokens)
    with serving(url, tmp_path / "server.log", BLOB_STORE="s3", S3_BUCKET=bucket, WORKERS="1") as base:
        yield base, {p.name: p.read_text() for p in tokens.iterdir()}


def submit(base: str, token: str, file: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [*podium_command(), "submit", str(file), "--server", base, "--token", token, "--task", REF, *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def staged(bucket: str) -> list[str]:
    """What is under the staging prefix: objects and multipart uploads in progress."""
    client = boto3.session.Session().client("s3")
    objects = client.list_objects_v2(Bucket=bucket, Prefix=STAGING).get("Contents", [])
    uploads = client.list_multipart_uploads(Bucket=bucket, Prefix=STAGING).get("Uploads", [])
    return [o["Key"] for o in objects] + [u["Key"] for u in uploads]


def phase(base: str) -> str:
    return f"{base}/api/v1/competitions/classification-example/tasks/sentiment/phases/test"


def mine(base: str, token: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{phase(base)}/submissions", headers={"Authorization": f"Bearer {token}"})
    return list(answer.json()["submissions"])


def test_a_direct_upload_ends_as_the_submission_a_normal_upload_of_the_file_makes(
    site: tuple[str, dict[str, str]], bucket: str, tmp_path: Path
) -> None:
    base, tokens = site
    sample = tmp_path / "predictions.tsv"
    sample.write_bytes(httpx.get(f"{phase(base)}/sample").content)
    normal = submit(base, tokens["ada"], sample, "--wait", "--json", "--direct-above", str(1 << 40))
    direct = submit(base, tokens["bob"], sample, "--wait", "--json", "--direct-above", "1")
    assert normal.returncode == 0, normal.stderr
    assert direct.returncode == 0, direct.stderr
    # stderr is no terminal here: no progress bar.
    assert direct.stderr == ""
    one, other = json.loads(normal.stdout), json.loads(direct.stdout)
    assert one["status"] == other["status"] == "scored"
    same = ("status", "metrics", "sha256", "size", "original_name", "breakdown")
    assert {k: one[k] for k in same} == {k: other[k] for k in same}
    assert other["sha256"] == hashlib.sha256(sample.read_bytes()).hexdigest()
    # Stored once, under its content address; nothing left in staging.
    client = boto3.session.Session().client("s3")
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert keys.count(other["sha256"]) == 1
    assert staged(bucket) == []


def test_an_altered_or_incomplete_upload_is_refused_and_leaves_nothing(
    site: tuple[str, dict[str, str]], bucket: str
) -> None:
    base, tokens = site
    headers = {"Authorization": f"Bearer {tokens['cyd']}"}
    data = os.urandom(12 * MIB)
    declared = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "filename": "big.tsv"}

    def start() -> dict[str, Any]:
        answer = httpx.post(f"{phase(base)}/direct-uploads", headers=headers, json=declared)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        assert len(body["parts"]) == 2
        return body

    def put(link: str, part: bytes) -> str:
        answer = httpx.put(link, content=part, timeout=60)
        assert answer.status_code == 200, answer.text
        return answer.headers["ETag"]

    # Altered on its way: the second part is not what was hashed.
    body = start()
    size = body["part_size"]
    etags = [put(body["parts"][0], data[:size]), put(body["parts"][1], b"X" + data[size + 1 :])]
    answer = httpx.post(body["complete_url"], headers=headers, json={"upload": body["upload"], "etags": etags})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"] == "direct_upload_mismatch"
    assert "altered or cut short" in answer.json()["detail"]
    assert answer.json()["problems"][0]["where"] == "sha256"
    # Incomplete: a part never sent.
    body = start()
    etags = [put(body["parts"][0], data[:size])]
    answer = httpx.post(body["complete_url"], headers=headers, json={"upload": body["upload"], "etags": etags})
    assert (answer.status_code, answer.json()["error"]) == (422, "direct_upload_incomplete"), answer.text
    # ... or named by an ETag the store never gave.
    body = start()
    etags = [put(body["parts"][0], data[:size]), '"0123456789abcdef0123456789abcdef"']
    answer = httpx.post(body["complete_url"], headers=headers, json={"upload": body["upload"], "etags": etags})
    assert (answer.status_code, answer.json()["error"]) == (422, "direct_upload_incomplete"), answer.text
    assert "could not put its parts together" in answer.json()["detail"]
    # A token made up, or another user's.
    answer = httpx.post(body["complete_url"], headers=headers, json={"upload": "made-up", "etags": etags})
    assert answer.status_code == 422, answer.text
    other = {"Authorization": f"Bearer {tokens['ada']}"}
    started = start()
    answer = httpx.post(started["complete_url"], headers=other, json={"upload": started["upload"], "etags": []})
    assert answer.status_code == 422 and "another user" in answer.json()["detail"], answer.text
    assert mine(base, tokens["cyd"]) == []
    # Every upload that was refused at its completion is gone from the bucket; the last one was never completed.
    assert len(staged(bucket)) == 1


def test_a_quota_refuses_before_any_link_is_handed_out(site: tuple[str, dict[str, str]], bucket: str) -> None:
    base, tokens = site
    headers = {"Authorization": f"Bearer {tokens['ada']}"}
    tight = f"{base}/api/v1/competitions/tight/tasks/sentiment/phases/test"
    declared = {"size": 5000, "sha256": "0" * 64, "filename": "p.tsv"}
    answer = httpx.post(f"{tight}/direct-uploads", headers=headers, json=declared)
    assert answer.status_code == 413, answer.text
    assert "parts" not in answer.json() and answer.json()["error"] == "storage_quota_exceeded"
    # Over the phase's size limit (50 MB by default), before any link too.
    answer = httpx.post(f"{phase(base)}/direct-uploads", headers=headers, json={**declared, "size": 10**12})
    assert answer.status_code == 413, answer.text
    assert staged(bucket) == []


def test_a_server_that_keeps_its_files_on_disk_says_so_and_the_cli_sends_the_file_as_usual(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    url = f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    seeded(url, tokens)
    with serving(url, tmp_path / "server.log", BLOB_STORE="disk", WORKERS="1") as base:
        token = (tokens / "ada").read_text()
        declared = {"size": 10, "sha256": "0" * 64, "filename": "p.tsv"}
        answer = httpx.post(
            f"{phase(base)}/direct-uploads", headers={"Authorization": f"Bearer {token}"}, json=declared
        )
        assert (answer.status_code, answer.json()["error"]) == (409, "direct_upload_unavailable"), answer.text
        assert "not in object storage" in answer.json()["detail"]
        sample = tmp_path / "predictions.tsv"
        sample.write_bytes(httpx.get(f"{phase(base)}/sample").content)
        sent = submit(base, token, sample, "--wait", "--json", "--direct-above", "1")
        assert sent.returncode == 0, sent.stderr
        assert json.loads(sent.stdout)["status"] == "scored"


def test_an_upload_never_completed_is_aborted_after_the_time_limit(
    bucket: str, db: Database, s3_server: S3Server
) -> None:
    database = Database(db.url, blobs=BlobStores(StoreName.S3, s3_bucket=bucket))
    # What a start left (its parts never completed), and what a completion cut short by a crash left.
    uploads = DirectUploads(cast(S3Store, database.blobs.writer))
    begun = uploads.start(10, 60)
    assert httpx.put(begun.urls[0], content=b"0123456789").status_code == 200
    completed = uploads.start(3, 60)
    etag = httpx.put(completed.urls[0], content=b"abc").headers["ETag"]
    uploads.complete(completed.key, completed.upload_id, [etag])
    # Within the time limit (and the hour of grace after it) both stay; past it both go.
    assert abandoned_direct_uploads(database, timedelta(hours=24), now=utcnow() + timedelta(hours=24)) == 0
    assert len(staged(bucket)) == 2
    assert abandoned_direct_uploads(database, timedelta(hours=24), now=utcnow() + timedelta(hours=25, minutes=1)) == 2
    assert staged(bucket) == []
    database.dispose()


def test_the_cli_shows_a_progress_bar_where_stderr_is_a_terminal(
    site: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    base, tokens = site
    sample = tmp_path / "predictions.tsv"
    sample.write_bytes(httpx.get(f"{phase(base)}/sample").content)
    ours, theirs = pty.openpty()
    command = [*podium_command(), "submit", str(sample), "--server", base, "--token", tokens["ada"], "--task", REF]
    with subprocess.Popen([*command, "--direct-above", "1"], stdout=subprocess.PIPE, stderr=theirs) as process:
        os.close(theirs)
        shown = b""
        with contextlib.suppress(OSError):  # the terminal's end reads EIO once the command closed its side
            while chunk := os.read(ours, 4096):
                shown += chunk
        assert process.wait(60) == 0
    os.close(ours)
    assert "━" in shown.decode("utf-8", "replace")  # the bar, drawn on the terminal only
    assert mine(base, tokens["ada"])[0]["sha256"] == hashlib.sha256(sample.read_bytes()).hexdigest()
