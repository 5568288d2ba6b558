"""Hostile competition bundles through the two doors organizers use: ``podium competition create`` and
``POST /api/v1/competitions``.

Each bundle is refused with exactly one problem under its exact key path: by the command as one
message on stderr with exit code 2 (no traceback), by the API as a 422 JSON answer; nothing is
stored, and no byte of a file outside the bundle reaches the answer. The loader's own rules are
tested in ``tests/app/services/bundles/test_loader.py``; here the doors are tested end to end.
"""

from __future__ import annotations

import copy
import io
import json
import stat
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from typer.testing import CliRunner

from app.cli import app as cli
from app.config import Settings
from app.services.accounts import users
from app.services.bundles.uploads import DATA_REFUSED
from app.storage.db import Database
from app.storage.models import Competition
from codalab.bounded_yaml import MAX_YAML_DEPTH
from scorers import scorer_names
from tests.app.builders import GOLD, make_user
from tests.app.labels_scorer import LabelScorer
from tests.app.web.test_pages import login, text, token

#: What a file outside the bundle holds: a valid gold, so only the path check can keep it out.
OUTSIDE = json.dumps({**GOLD, "a": "OUTSIDE-SECRET"}).encode()
GOLD_KEY = "tasks[0].phases[0].gold"


def inside(path: str, folder: str = "bundle folder") -> str:
    return f"{path}: give a path inside the {folder}, with '/', no '..' and no leading '/'"


def bundle(task: dict[str, Any] | None = None, phase: dict[str, Any] | None = None) -> dict[str, Any]:
    document: dict[str, Any] = {
        "slug": "hostile",
        "title": "Hostile",
        "tasks": [
            {
                "slug": "labels",
                "title": "Labels",
                "scorer": "test-labels",
                "phases": [{"slug": "dev", "title": "Dev", "gold": {"path": "gold.json"}}],
            }
        ],
    }
    document["tasks"][0].update(copy.deepcopy(task or {}))
    document["tasks"][0]["phases"][0].update(copy.deepcopy(phase or {}))
    return document


def unknown_scorer() -> str:
    return f"unknown scorer 'test-labelz'; known scorers: {', '.join(sorted(scorer_names()))}"


#: (bundle, key path, message); a message given as a function is computed when the scorers are registered.
CASES = [
    pytest.param(bundle(phase={"gold": {"path": "../outside.json"}}), GOLD_KEY, inside("../outside.json"), id="up"),
    pytest.param(
        bundle(task={"training_files": [{"path": "data/../../outside.json"}]}),
        "tasks[0].training_files[0]",
        inside("data/../../outside.json"),
        id="up-from-a-subfolder",
    ),
    pytest.param(
        bundle(task={"resources": [{"path": "/etc/passwd"}]}),
        "tasks[0].resources[0]",
        inside("/etc/passwd"),
        id="absolute",
    ),
    pytest.param(
        bundle(phase={"public_files": [{"path": "inputs/missing.txt"}]}),
        "tasks[0].phases[0].public_files[0]",
        "file not found: inputs/missing.txt",
        id="missing-file",
    ),
    pytest.param(bundle(phase={"gold": {"path": "gone.json"}}), GOLD_KEY, "file not found: gone.json", id="no-gold"),
    pytest.param(bundle(task={"scorer": "test-labelz"}), "tasks[0].scorer", unknown_scorer, id="wrong-scorer"),
    pytest.param(
        bundle(task={"scorer_options": {"crash": "yes"}}),
        "tasks[0].scorer_options.crash",
        "option 'crash' of test-labels must be of type bool, not str",
        id="option-of-wrong-type",
    ),
    pytest.param(
        bundle(task={"scorer_options": {"nope": 1}}),
        "tasks[0].scorer_options",
        "unknown option(s) for test-labels: nope (known: crash)",
        id="unknown-option",
    ),
    pytest.param({**bundle(), "title": "T" * 201}, "title", "at most 200 characters, found 201", id="long-title"),
    pytest.param(bundle(task={"title": "T" * 300}), "tasks[0].title", "at most 200 characters, found 300", id="long"),
    pytest.param(bundle(phase={"title": "Dev\x00"}), "tasks[0].phases[0].title", "contains a NUL character", id="nul"),
]


def write_folder(root: Path, document: dict[str, Any]) -> Path:
    """The bundle folder ``root/bundle`` (YAML and gold), with a valid gold beside it, outside."""
    folder = root / "bundle"
    folder.mkdir()
    (folder / "competition.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    (folder / "gold.json").write_bytes(json.dumps(GOLD).encode())
    (root / "outside.json").write_bytes(OUTSIDE)
    return folder


def zipped(entries: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3  # Unix, so that the mode bits mean what they say
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def stored(db: Database) -> int:
    with db.session(read_only=True) as session:
        return session.scalar(select(func.count()).select_from(Competition)) or 0


# -- the command ----------------------------------------------------------------------------------------


def create_by_command(db: Database, folder: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["competition", "create", str(folder)], env={"PODIUM_DATABASE_URL": db.url})
    return result.exit_code, result.stdout, result.stderr


def refused_once(key: str, message: str) -> str:
    return f"The bundle was refused: 1 problem.\n- {key}: {message}\n"


@pytest.mark.parametrize(("document", "key", "message"), CASES)
def test_the_command_refuses_a_hostile_bundle_with_its_key_path(
    db: Database, labels: type[LabelScorer], tmp_path: Path, document: dict[str, Any], key: str, message: Any
) -> None:
    expected = message() if callable(message) else message
    code, out, err = create_by_command(db, write_folder(tmp_path, document))
    assert (code, out, err) == (2, "", refused_once(key, expected))
    assert stored(db) == 0


def test_the_command_refuses_a_link_leading_out_of_the_bundle(
    db: Database, labels: type[LabelScorer], tmp_path: Path
) -> None:
    folder = write_folder(tmp_path, bundle(phase={"gold": {"path": "data/link.json"}}))
    (folder / "data").mkdir()
    (folder / "data" / "link.json").symlink_to(tmp_path / "outside.json")
    message = "data/link.json is a symbolic link that leads outside the bundle folder"
    assert create_by_command(db, folder) == (2, "", refused_once(GOLD_KEY, message))
    assert stored(db) == 0


def test_the_command_accepts_the_same_bundle_once_it_is_fixed(
    db: Database, labels: type[LabelScorer], tmp_path: Path
) -> None:
    """The refusals above are about the hostile entries, not about the rest of the bundle."""
    code, out, err = create_by_command(db, write_folder(tmp_path, bundle()))
    assert (code, out, err) == (0, "created competition hostile: 1 task(s), 1 phase(s)\n", "")
    assert stored(db) == 1


# -- the API --------------------------------------------------------------------------------------------


@pytest.fixture
def organizer(db: Database) -> dict[str, str]:
    with db.session() as session:
        token = users.issue_token(session, make_user(session, "olga", organizer=True))
        session.commit()
    return {"Authorization": f"Bearer {token}"}


def create_by_api(client: TestClient, headers: dict[str, str], data: bytes, name: str = "bundle.zip") -> Any:
    return client.post("/api/v1/competitions", headers=headers, files={"bundle": (name, data, "application/zip")})


def assert_refused(answer: Any, key: str, message: str) -> None:
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert (body["error"], body["problems"], body["total"]) == ("invalid_bundle", [{"key": key, "message": message}], 1)
    assert "OUTSIDE-SECRET" not in answer.text


@pytest.mark.parametrize(("document", "key", "message"), CASES)
def test_the_api_refuses_a_hostile_bundle_with_its_key_path(
    db: Database,
    client: TestClient,
    organizer: dict[str, str],
    document: dict[str, Any],
    key: str,
    message: Any,
) -> None:
    data = zipped({"competition.yaml": yaml.safe_dump(document).encode(), "gold.json": json.dumps(GOLD).encode()})
    assert_refused(create_by_api(client, organizer, data), key, message() if callable(message) else message)
    assert stored(db) == 0


def test_the_api_refuses_a_zipped_link(db: Database, client: TestClient, organizer: dict[str, str]) -> None:
    data = zipped({"competition.yaml": yaml.safe_dump(bundle()).encode()}, links={"gold.json": "/etc/passwd"})
    assert_refused(
        create_by_api(client, organizer, data), "", "the bundle archive entry 'gold.json' is a link or a special file"
    )
    assert stored(db) == 0


def admin(db: Database) -> dict[str, str]:
    with db.session() as session:
        token = users.issue_token(session, make_user(session, "root", admin=True))
        session.commit()
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("../outside.json", inside("../outside.json", "data folder")),
        ("link.json", "link.json is a symbolic link that leads outside the data folder"),
    ],
)
@pytest.mark.parametrize("sender", ["organizer", "site admin"])
def test_a_lone_yaml_may_not_name_files_outside_the_data_folder(
    db: Database,
    client: TestClient,
    organizer: dict[str, str],
    settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
    entry: str,
    message: str,
    sender: str,
) -> None:
    """A site admin, who may read the data folder, is told why the path is refused; an organizer, who may not,
    gets the one refusal of every ``data:`` entry, which says nothing about the path."""
    assert settings.data_dir is not None
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "outside.json"
    elsewhere.write_bytes(OUTSIDE)
    (settings.data_dir / "link.json").symlink_to(elsewhere)
    text = yaml.safe_dump(bundle(phase={"gold": {"data": entry}})).encode()
    headers = organizer if sender == "organizer" else admin(db)
    expected = DATA_REFUSED if sender == "organizer" else message
    assert_refused(create_by_api(client, headers, text, "competition.yaml"), GOLD_KEY, expected)
    assert stored(db) == 0


# -- nesting --------------------------------------------------------------------------------------------

#: Where a bundle nested 100,000 lists deep under ``scorer_options.x`` gets too deep: the 33rd collection.
DEEP_KEY = "tasks[0].scorer_options.x" + "[0]" * (MAX_YAML_DEPTH - 4)


def deep_yaml() -> bytes:
    """A bundle whose scorer option holds 100,000 nested lists (200 KB): PyYAML's composer recurses once a level."""
    text = yaml.safe_dump(bundle(task={"scorer_options": {"x": "DEEP"}}))
    return text.replace("x: DEEP", "x: " + "[" * 100_000 + "]" * 100_000).encode()


#: The line of the bundle holding the nested lists.
DEEP_LINE = next(n for n, line in enumerate(deep_yaml().decode().splitlines(), 1) if "x: [" in line)


def deep_message() -> str:
    column = deep_yaml().decode().splitlines()[DEEP_LINE - 1].index("[") + MAX_YAML_DEPTH - 4
    return f"nested deeper than {MAX_YAML_DEPTH} levels (line {DEEP_LINE}, column {column + 1})"


def test_the_command_refuses_a_bundle_nested_too_deeply_at_its_key_path(
    db: Database, labels: type[LabelScorer], tmp_path: Path
) -> None:
    folder = write_folder(tmp_path, bundle())
    (folder / "competition.yaml").write_bytes(deep_yaml())
    assert create_by_command(db, folder) == (2, "", refused_once(DEEP_KEY, deep_message()))
    assert stored(db) == 0


@pytest.mark.parametrize("sent", ["zip", "yaml"])
def test_the_api_refuses_a_bundle_nested_too_deeply_at_its_key_path(
    db: Database, client: TestClient, organizer: dict[str, str], sent: str
) -> None:
    if sent == "zip":
        answer = create_by_api(client, organizer, zipped({"competition.yaml": deep_yaml(), "gold.json": OUTSIDE}))
    else:
        answer = create_by_api(client, organizer, deep_yaml(), "competition.yaml")
    assert_refused(answer, DEEP_KEY, deep_message())
    assert stored(db) == 0


def test_the_page_refuses_a_bundle_nested_too_deeply_at_its_key_path(
    db: Database, client: TestClient, organizer: dict[str, str]
) -> None:
    login(client, "olga")
    csrf = token(client.get("/competitions/new"))
    answer = client.post(
        "/competitions/new", data={"csrf_token": csrf}, files={"bundle": ("competition.yaml", deep_yaml())}
    )
    assert answer.status_code == 422
    shown = text(answer)
    assert "The bundle was refused: 1 problem." in shown
    assert f"{DEEP_KEY} : {deep_message()}" in shown
    assert stored(db) == 0
