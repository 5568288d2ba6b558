"""``podium delete-submission`` against a real server in this process: the team's own goes, a refusal exits 2
with the server's reason."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import app
from app.config import Settings
from app.main import create_app
from app.storage.db import Database
from tests.app.builders import HALF
from tests.app.test_cli_baselines import server  # noqa: F401 (the fixture)
from tests.app.web.test_api import auth, setup, upload, wait


def test_a_team_deletes_its_submission_from_the_command_line(
    db: Database,
    settings: Settings,
    server: str,  # noqa: F811
    labels: Any,
) -> None:
    setup(db)
    ada, bob = auth(db, "ada"), auth(db, "bob")
    with TestClient(create_app(settings)) as client:
        submission_id = upload(client, ada, HALF).json()["id"]
        wait(client)
    token = ada["Authorization"].removeprefix("Bearer ")
    other = bob["Authorization"].removeprefix("Bearer ")
    args = ("--server", server)

    refused = CliRunner().invoke(app, ["delete-submission", str(submission_id), *args, "--token", other])
    assert refused.exit_code == 2
    assert f"refused (404 not_found): there is no submission {submission_id} that you may see" in refused.stderr

    deleted = CliRunner().invoke(app, ["delete-submission", str(submission_id), *args, "--token", token])
    assert (deleted.exit_code, deleted.stdout) == (0, f"submission {submission_id} is deleted\n")
    again = CliRunner().invoke(app, ["delete-submission", str(submission_id), *args, "--token", token])
    assert again.exit_code == 2
