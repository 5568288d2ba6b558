"""Applying the Alembic migrations from code (``podium serve``, ``podium db upgrade``, tests).

The schema exists only through the migrations in ``alembic/``; nothing calls ``create_all``.
"""

from __future__ import annotations

from pathlib import Path

from alembic.command import upgrade as alembic_upgrade
from alembic.config import Config
from sqlalchemy import Engine

ROOT = Path(__file__).resolve().parents[2]


def alembic_config(engine: Engine | None = None) -> Config:
    """Alembic's configuration for this checkout; with ``engine``, migrations run on it."""
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "alembic"))
    if engine is not None:
        config.attributes["engine"] = engine
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database up to ``revision`` (the newest by default)."""
    alembic_upgrade(alembic_config(engine), revision)


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or ``None`` before the first migration."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
