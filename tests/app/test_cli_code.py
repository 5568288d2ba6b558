"""``podium submit`` and ``podium baseline upload`` on a code phase, against a real server in this process: the
program is uploaded as any file, run in the sandbox, and ``--wait`` follows it until it is scored."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli import app
from app.storage.db import Database
from tests.app.test_cli_baselines import server  # noqa: F401 (the fixture: the app served by uvicorn)
from tests.app.test_code_runs import STARTER, create, zipped
from tests.app.web.test_api import auth

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here")

TASK = "svident-code/detection/test"


def test_submit_and_baseline_upload_wait_for_the_program_run_and_its_score(
    db: Database,
    server: str,  # noqa: F811
    tmp_path: Any,
) -> None:
    create(db)
    program = tmp_path / "program.zip"
    program.write_bytes(zipped({"predict.py": STARTER}))
    token = auth(db, "ada")["Authorization"].removeprefix("Bearer ")
    args = ("--server", server, "--task", TASK, "--wait", "--json")
    submitted = CliRunner().invoke(app, ["submit", *args, "--token", token, str(program)])
    assert submitted.exit_code == 0, submitted.output
    body = json.loads(submitted.stdout)
    assert (body["status"], body["code_run"]["stage"]) == ("scored", "scored")
    organizer = auth(db, "olga")["Authorization"].removeprefix("Bearer ")
    uploaded = CliRunner().invoke(
        app, ["baseline", "upload", *args, "--token", organizer, "--name", "cues", str(program)]
    )
    assert uploaded.exit_code == 0, uploaded.output
    baseline = json.loads(uploaded.stdout)
    assert (baseline["status"], baseline["baseline"], baseline["team"]) == ("scored", True, "cues")
    refused = CliRunner().invoke(app, ["baseline", "upload", *args, "--token", token, str(program)])
    assert refused.exit_code == 2
    assert "only the organizers of 'svident-code' may do this" in refused.stderr
