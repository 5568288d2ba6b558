"""The data-folder attack, replayed against a real ``podium serve`` whose data folder holds another
competition's hidden gold.

The attack: a user with the organizer role sent a bundle whose ``training_files`` named that gold with
``{data: ...}``; the competition was created and anyone could download the gold. A "file not found" for
other paths also told which files the folder holds. Now only site admins may name the data folder's files
over the API: the organizer's bundle is refused, with the same words whatever the path names (the file,
a missing file, a path that climbs out, an absolute one), nothing is created, and the gold appears in no
answer. A site admin sending the same bundle is served, so the test can tell a refusal from a broken route.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from app.services.accounts import users
from app.services.bundles.uploads import DATA_REFUSED
from app.storage.db import Database
from tests.security.live_server import TIMEOUT, LiveServer, serve

pytestmark = pytest.mark.slow

CANARY = "HIDDEN-GOLD-CANARY-5d1f"
#: A source-validation gold: the hidden one holds the canary as an instance id.
HIDDEN = {"instance_id": CANARY, "valid_source": True}
PUBLIC = {"instance_id": "pair-1", "valid_source": False}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("data")
    (folder / "hidden").mkdir()
    (folder / "hidden" / "gold.jsonl").write_text(json.dumps(HIDDEN) + "\n")
    (folder / "public").mkdir()
    (folder / "public" / "gold.jsonl").write_text(json.dumps(PUBLIC) + "\n")
    return folder


@pytest.fixture(scope="module")
def server(migrated: Database, data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serve(migrated, tmp_path_factory.mktemp("data-attack"), DATA_DIR=str(data_dir)) as server:
        yield server


def admin_token(database: Database) -> str:
    with database.session() as session:
        user = users.find_user(session, "root") or users.create_user(session, "root", "a long password", is_admin=True)
        token = users.issue_token(session, user)
        session.commit()
    return token


def bundle(slug: str, training: str) -> bytes:
    """A YAML bundle alone whose training file is ``{data: training}``, scored on a public gold."""
    spec: dict[str, Any] = {
        "slug": slug,
        "title": "Attack",
        "tasks": [
            {
                "slug": "sv",
                "title": "SV",
                "scorer": "famus-sv",
                "training_files": [{"data": training, "name": "train.jsonl"}],
                "phases": [{"slug": "dev", "title": "Dev", "gold": {"data": "public/gold.jsonl"}}],
            }
        ],
    }
    return yaml.safe_dump(spec).encode()


def create(server: LiveServer, token: str, data: bytes) -> httpx.Response:
    return httpx.post(
        server.api("competitions"),
        headers={"Authorization": f"Bearer {token}"},
        files={"bundle": ("competition.yaml", data, "application/yaml")},
        timeout=TIMEOUT,
    )


@pytest.mark.parametrize(
    "training", ["hidden/gold.jsonl", "hidden/missing.jsonl", "hidden", "../../../etc/passwd", "/etc/passwd"]
)
def test_an_organizer_cannot_publish_the_data_folders_files(server: LiveServer, training: str) -> None:
    answer = create(server, server.organizer_token, bundle("attack", training))
    assert answer.status_code == 422, answer.text
    # Every path gets the same refusal, for the gold and for the data folder's own gold: no oracle.
    assert sorted(answer.json()["problems"], key=lambda p: p["key"]) == [
        {"key": "tasks[0].phases[0].gold", "message": DATA_REFUSED},
        {"key": "tasks[0].training_files[0]", "message": DATA_REFUSED},
    ]
    assert CANARY not in answer.text
    assert httpx.get(server.api("competitions/attack"), timeout=TIMEOUT).status_code == 404


def test_a_site_admin_may_name_the_data_folders_files(server: LiveServer, migrated: Database) -> None:
    created = create(server, admin_token(migrated), bundle("by-admin", "hidden/gold.jsonl"))
    assert created.status_code == 201, created.text
    download = httpx.get(server.api("competitions/by-admin/tasks/sv/files/train.jsonl"), timeout=TIMEOUT)
    assert CANARY in download.text  # the admin's own choice to publish it: the route itself works
