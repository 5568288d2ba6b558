"""A baseline system whose modules this installation lacks (as the MiniLM ones lack torch on the serve
tier) is not offered: the organize page, the API's registry and ``podium baselines`` list it as
unavailable with what to install, and starting it is refused at once (409, nothing queued) instead of
a run that fails after the click."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from typer.testing import CliRunner

from app.cli import app as cli
from app.storage.db import Database
from app.storage.models import BaselineRun
from tests.app.labels_baselines import NAME, NO_SUCH_MODULE, UNINSTALLED, LabelsUninstalled, uninstalled
from tests.app.web.test_api import PHASE, auth
from tests.app.web.test_pages import BOARD, login, setup, text, token

INSTALL = "pip install 'podium[baselines]'"


@pytest.fixture
def missing(system: Any) -> Iterator[type[LabelsUninstalled]]:
    with uninstalled() as cls:
        yield cls


def runs(db: Database) -> int:
    with db.session(read_only=True) as session:
        return int(session.scalar(select(func.count()).select_from(BaselineRun)) or 0)


def test_the_registry_says_which_systems_can_run_here_and_what_to_install(client: TestClient, missing: Any) -> None:
    listed = {
        b["name"]: b for b in client.get("/api/v1/baselines", params={"scorer": "test-labels"}).json()["baselines"]
    }
    assert (listed[NAME]["available"], listed[NAME]["missing"]) == (True, [])
    assert (listed[UNINSTALLED]["available"], listed[UNINSTALLED]["missing"]) == (False, [NO_SUCH_MODULE])
    assert listed[UNINSTALLED]["install"] == INSTALL


def test_starting_an_unavailable_system_is_refused_before_anything_is_queued(
    db: Database, client: TestClient, missing: Any
) -> None:
    setup(db)
    refused = client.post(f"{PHASE}/baseline-runs", headers=auth(db, "olga"), json={"baseline": UNINSTALLED})
    assert refused.status_code == 409
    body = refused.json()
    assert body["error"] == "baseline_unavailable"
    assert NO_SUCH_MODULE in body["detail"] and INSTALL in body["detail"]
    assert runs(db) == 0


def test_the_organize_page_offers_only_what_can_run_and_names_what_to_install(
    db: Database, client: TestClient, missing: Any
) -> None:
    setup(db)
    login(client, "olga")
    page = client.get(f"{BOARD}/organize")
    assert f'<option value="{NAME}">' in page.text
    assert f'<option value="{UNINSTALLED}">' not in page.text
    shown = re.sub(r" ([),.])", r"\1", html.unescape(text(page)))  # no space left where a tag ended
    assert "Not installed on this server, so not offered:" in shown
    needs = f"({UNINSTALLED}): needs {NO_SUCH_MODULE}; install it with {INSTALL}"
    assert f"{needs} (from a checkout: make serve-full), then restart the server." in shown
    # A form posted anyway (an old page, a hand-made request) is refused with the reason, nothing queued.
    refused = client.post(f"{BOARD}/organize/baseline-runs", data={"csrf_token": token(page), "baseline": UNINSTALLED})
    assert refused.status_code == 409
    assert f"baseline {UNINSTALLED} cannot run on this installation" in text(refused)
    assert runs(db) == 0


def test_podium_baselines_lists_the_unavailable_systems_apart(missing: Any) -> None:
    listed = CliRunner().invoke(cli, ["baselines", "--scorer", "test-labels"])
    assert listed.exit_code == 0, listed.stderr
    runnable, _, unavailable = listed.stdout.partition("Not installed here, so this installation cannot run them:")
    assert f"{NAME} (version 2)" in runnable and UNINSTALLED not in runnable
    assert f"  {UNINSTALLED} (version 2): needs {NO_SUCH_MODULE}; {INSTALL}" in unavailable
