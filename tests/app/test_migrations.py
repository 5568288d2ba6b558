"""The schema comes only from the migrations, and the migrations build exactly what the models say."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.command import downgrade
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from app.storage.db import Database
from app.storage.migrate import alembic_config, current_revision, upgrade
from app.storage.models import Base


def test_migrations_and_models_agree(migrated: Database) -> None:
    with migrated.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, Base.metadata)
    assert differences == []


def test_database_is_at_the_newest_revision(migrated: Database) -> None:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    assert current_revision(migrated.engine) == head


def test_there_is_one_line_of_revisions() -> None:
    assert len(ScriptDirectory.from_config(alembic_config()).get_heads()) == 1


def test_the_migrations_go_down_and_up_again(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'updown.sqlite3'}")
    try:
        upgrade(database.engine)
        downgrade(alembic_config(database.engine), "base")
        assert set(inspect(database.engine).get_table_names()) == {"alembic_version"}
        upgrade(database.engine)
        assert "submissions" in inspect(database.engine).get_table_names()
    finally:
        database.dispose()
