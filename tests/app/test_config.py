"""Settings: read from PODIUM_* variables, and every one of them documented in the README's table."""

from __future__ import annotations

import re

import pytest

from app.config import Settings
from tests.conftest import ROOT


def test_the_readme_table_lists_exactly_the_settings() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Settings", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `PODIUM_([A-Z0-9_]+)` \|", section, re.MULTILINE))
    assert documented == {name.upper() for name in Settings.model_fields}


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PODIUM_MAX_UPLOAD_BYTES", "1000")
    monkeypatch.setenv("PODIUM_WORKERS", "0")
    settings = Settings()
    assert (settings.max_upload_bytes, settings.workers) == (1000, 0)
    assert Settings(workers=3).workers == 3  # explicit values win


def test_the_default_database_is_a_sqlite_file_under_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PODIUM_DATABASE_URL", raising=False)
    assert Settings().database_url == "sqlite:///var/podium.sqlite3"
    assert Settings().max_upload_bytes == 50 * 1024 * 1024
