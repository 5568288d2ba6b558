"""Alembic's entry point: runs the migrations on the engine given by the caller, or on the database
named by ``PODIUM_DATABASE_URL``."""

from __future__ import annotations

from sqlalchemy import Engine

from alembic import context
from app.config import Settings
from app.storage.db import create_engine_for
from app.storage.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    engine: Engine | None = config.attributes.get("engine")
    owned = engine is None
    if engine is None:
        engine = create_engine_for(Settings().database_url)
    try:
        with engine.connect() as connection:
            context.configure(
                connection=connection,
                target_metadata=target_metadata,
                # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
                render_as_batch=connection.dialect.name == "sqlite",
                compare_type=True,
            )
            with context.begin_transaction():
                context.run_migrations()
    finally:
        if owned:
            engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run them against a database")
run_migrations_online()
