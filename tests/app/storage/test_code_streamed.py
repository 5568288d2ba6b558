"""A code run fetches its program and the phase's inputs to local files in chunks (``code.execution.fetch``):
a program carrying a model of hundreds of MB runs without ever sitting in the worker's memory, from the disk
store (its own file) and from the s3 store (a streamed copy)."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import select

from app.config import Settings
from app.services.code.job import run_code_job
from app.services.jobs.kinds import JobContext
from app.services.scoring.gold import GoldCache
from app.services.submissions import intake
from app.services.submissions.limits import Limits
from app.storage.blobs import Content
from app.storage.db import Database
from app.storage.enums import StoreName
from app.storage.models import CodeRun, RunStatus, Submission, SubmissionStatus, User
from tests.app.storage.conftest import stores_for
from tests.app.test_code_runs import ALL_ZERO, create

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here")

MIB = 1024 * 1024
#: The model the program carries: random, so that the zip stores it as it is.
WEIGHTS = 96 * MIB
REF = ("svident-code", "detection", "test")


def large_program(folder: Path) -> Path:
    """A zip with a predict.py that checks its weights file is all there, and ``WEIGHTS`` bytes of weights."""
    predict = f"""\
        import csv, json, os, sys
        from pathlib import Path
        inputs, output = Path(sys.argv[1]), Path(sys.argv[2])
        assert os.path.getsize("weights.bin") == {WEIGHTS}, os.path.getsize("weights.bin")
        with (inputs / "inputs.tsv").open(encoding="utf-8", newline="") as file:
            uuids = [row["uuid"] for row in csv.DictReader(file, delimiter="\\t")]
        """
    path = folder / "program.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("predict.py", textwrap.dedent(predict) + ALL_ZERO)
        with archive.open("weights.bin", "w", force_zip64=True) as weights:
            for _ in range(WEIGHTS // MIB):
                weights.write(os.urandom(MIB))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("store", [StoreName.DISK, StoreName.S3])
def test_a_program_of_a_hundred_mb_runs_without_being_held_in_memory(
    store: StoreName, request: pytest.FixtureRequest, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stores = stores_for(store, request, tmp_path)
    database = Database(db.url, blobs=stores)
    request.addfinalizer(database.dispose)  # also when an assertion fails: no connection left to the collector
    settings = Settings(database_url=db.url, lease_seconds=30, max_upload_bytes=WEIGHTS + 64 * MIB)
    create(database)
    with large_program(tmp_path).open("rb") as file, Content.spool(file) as content, database.session() as session:
        user = session.scalar(select(User).where(User.name == "ada"))
        upload = intake.Upload(content, "program.zip")
        accepted = intake.submit(session, user, REF, upload, limits=Limits.of(settings), gold_cache=GoldCache())
        session.commit()
        submission_id = accepted.submission.id
    with database.session() as session:
        run_id = session.scalar(select(CodeRun.id).where(CodeRun.submission_id == submission_id))
    assert run_id is not None

    # The run's temporary files go to a folder of this test's own (the machine's /tmp changes with the tests
    # running beside it); readable by the sandbox's unprivileged user, as /tmp is.
    scratch = tempfile.mkdtemp(prefix="podium-scratch-")
    os.chmod(scratch, 0o755)
    monkeypatch.setattr(tempfile, "tempdir", scratch)
    tracemalloc.start()
    try:
        run_code_job(JobContext(database, settings, GoldCache()), run_id)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    with database.session() as session:
        run = session.get(CodeRun, run_id)
        submission = session.get(Submission, submission_id)
        assert run is not None and submission is not None
        assert (run.status, run.exit_code) == (RunStatus.SUCCEEDED, 0), (run.outcome, run.stderr)
        assert submission.status == SubmissionStatus.QUEUED  # its predictions wait for the scoring job
    # Read whole, the program alone would be 96 MB; fetched in chunks the run allocates a few MB.
    assert peak < 24 * MIB, f"the run allocated {peak / MIB:.0f} MiB at its peak"
    assert os.listdir(scratch) == []  # the fetched copies are gone
    os.rmdir(scratch)
