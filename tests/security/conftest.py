"""The security tests run on the application's test database (SQLite, or PostgreSQL when
``PODIUM_TEST_DATABASE_URL`` is set) and with its test scorer: the fixtures are those of ``tests/app``."""

from __future__ import annotations

from tests.app.conftest import client, database_url, db, labels, migrated, settings

__all__ = ["client", "database_url", "db", "labels", "migrated", "settings"]
