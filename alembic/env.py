"""Alembic's entry point: runs the migrations on the engine given by the caller, or on the database
named by ``PODIUM_DATABASE_URL``."""

from __future__ import annotations

from sqlalchemy import Connection, Engine

from alembic import context
from app.config import Settings
from app.storage.db import create_engine_for
from app.storage.models import Base

config = context.config
target_metadata = Base.metadata


def _foreign_keys(connection: Connection, *, on: bool) -> None:
    """Switch SQLite's foreign key enforcement for this connection. Batch mode rebuilds a table by dropping it,
    and with enforcement on, SQLite's DROP TABLE first deletes every row, cascading to the rows that refer to
    them (altering ``competitions`` emptied ``teams``). The pragma is ignored inside a transaction, so it goes
    straight to the driver's connection, outside SQLAlchemy's."""
    connection.connection.driver_connection.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")


def _check_foreign_keys(connection: Connection) -> None:
    """Refuse to commit migrations that left a row referring to a missing one (enforcement was off)."""
    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        raise RuntimeError(f"the migrations left rows that refer to missing rows: {broken[:10]}")


def run_migrations_online() -> None:
    engine: Engine | None = config.attributes.get("engine")
    owned = engine is None
    if engine is None:
        engine = create_engine_for(Settings().database_url)
    try:
        with engine.connect() as connection:
            sqlite = connection.dialect.name == "sqlite"
            if sqlite:
                _foreign_keys(connection, on=False)
            context.configure(
                connection=connection,
                target_metadata=target_metadata,
                # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
                render_as_batch=sqlite,
                compare_type=True,
            )
            try:
                with context.begin_transaction():
                    context.run_migrations()
                    if sqlite:
                        _check_foreign_keys(connection)
                if sqlite:
                    connection.commit()  # the pragma below would be ignored inside the transaction
            except BaseException:
                connection.rollback()
                raise
            finally:
                if sqlite:
                    _foreign_keys(connection, on=True)
    finally:
        if owned:
            engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run them against a database")
run_migrations_online()
