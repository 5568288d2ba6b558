"""The argon2 parameters of password hashes: RFC 9106's low-memory profile unless PODIUM_PASSWORD_HASH_PROFILE says
``cheapest`` (what the test suite sets, tests/conftest.py), and a login moves a stored hash to the current one."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.services.accounts import users
from app.services.errors import NotAuthenticated
from app.storage.db import Database
from tests.app.builders import PASSWORD
from tests.conftest import ROOT

RFC9106 = "$argon2id$v=19$m=65536,t=3,p=4$"
CHEAPEST = "$argon2id$v=19$m=8,t=1,p=1$"


@pytest.fixture
def profile() -> Iterator[None]:
    """Whatever a test sets, the process goes back to the suite's profile afterwards."""
    yield
    users.use_password_profile(Settings(database_url="sqlite://").password_hash_profile)


def stored_hash(db: Database, name: str) -> str:
    with db.session() as session:
        user = users.find_user(session, name)
        assert user is not None
        return user.password_hash


def test_an_app_on_the_default_settings_stores_rfc9106_hashes(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: None
) -> None:
    monkeypatch.delenv("PODIUM_PASSWORD_HASH_PROFILE", raising=False)
    settings = Settings(database_url=db.url, workers=0, data_dir=tmp_path)
    assert settings.password_hash_profile == "rfc9106-low-memory"
    with TestClient(create_app(settings)) as client:
        assert client.post("/api/v1/users", json={"name": "ada", "password": PASSWORD}).status_code == 201
        assert stored_hash(db, "ada").startswith(RFC9106)
        login = client.post("/api/v1/tokens", json={"name": "ada", "password": PASSWORD})
        assert login.status_code == 201, login.text


def test_the_cheapest_profile_is_what_the_setting_names(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: None
) -> None:
    monkeypatch.setenv("PODIUM_PASSWORD_HASH_PROFILE", "cheapest")
    with TestClient(create_app(Settings(database_url=db.url, workers=0, data_dir=tmp_path))) as client:
        assert client.post("/api/v1/users", json={"name": "ada", "password": PASSWORD}).status_code == 201
    assert stored_hash(db, "ada").startswith(CHEAPEST)


@pytest.mark.parametrize(
    ("before", "after", "prefix"),
    [("cheapest", "rfc9106-low-memory", RFC9106), ("rfc9106-low-memory", "cheapest", CHEAPEST)],
)
def test_a_login_rehashes_a_password_stored_with_other_parameters(
    db: Database, profile: None, before: str, after: str, prefix: str
) -> None:
    users.use_password_profile(before)
    with db.session() as session:
        users.create_user(session, "ada", PASSWORD)
        session.commit()
    assert not stored_hash(db, "ada").startswith(prefix)
    users.use_password_profile(after)
    with db.session() as session:
        with pytest.raises(NotAuthenticated):
            users.authenticate(session, "ada", "not the password")
        users.authenticate(session, "ada", PASSWORD)
        session.commit()
    assert stored_hash(db, "ada").startswith(prefix)
    with db.session() as session:
        assert users.authenticate(session, "ADA", PASSWORD).name == "ada"


def test_an_unknown_profile_is_a_clear_setting_error(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PODIUM_PASSWORD_HASH_PROFILE": "fast", "PODIUM_DATA_DIR": str(tmp_path)}
    refused = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--port", "1"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert refused.returncode == 2
    assert "PODIUM_PASSWORD_HASH_PROFILE" in refused.stderr and "Traceback" not in refused.stderr


def test_podium_serve_warns_that_the_cheapest_profile_is_for_tests(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        "PATH": "/usr/bin:/bin",
        "PODIUM_PASSWORD_HASH_PROFILE": "cheapest",
        "PODIUM_DATABASE_URL": f"sqlite:///{tmp_path / 'podium.sqlite3'}",
        "PODIUM_DATA_DIR": str(tmp_path),
        "PODIUM_WORKERS": "0",
        "PODIUM_SECRET_KEY": "a key of this test's own",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
    finally:
        process.terminate()
        process.communicate(timeout=60)
    assert "PODIUM_PASSWORD_HASH_PROFILE=cheapest" in first and "test suites" in first
