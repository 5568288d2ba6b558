from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import select, text, update

from app.storage.blobs import put_blob, read_blob, sha256_hex
from app.storage.db import Database, end_read_transaction
from app.storage.models import Blob, User


def test_times_come_back_as_aware_utc(db: Database) -> None:
    plus_two = timezone(timedelta(hours=2))
    with db.session() as session:
        session.add(User(name="ada", password_hash="x", created_at=datetime(2025, 3, 1, 12, 30, tzinfo=plus_two)))
        session.commit()
    with db.session() as session:
        created = session.scalar(select(User.created_at))
    assert created == datetime(2025, 3, 1, 10, 30, tzinfo=UTC)
    assert created is not None and created.tzinfo is not None and created.utcoffset() == timedelta(0)


def test_a_naive_time_is_refused(db: Database) -> None:
    with db.session() as session:
        session.add(User(name="ada", password_hash="x", created_at=datetime(2025, 3, 1, 12, 30)))
        with pytest.raises(Exception, match="naive datetime"):
            session.flush()


def test_a_blob_is_stored_once_per_content(db: Database) -> None:
    with db.session() as session:
        first = put_blob(session, b"hello")
        second = put_blob(session, b"hello")
        other = put_blob(session, b"world")
        session.commit()
        assert first.id == second.id != other.id
        assert first.sha256 == sha256_hex(b"hello")
        assert first.size == 5
        assert read_blob(session, other.id) == b"world"
        assert session.scalar(select(text("count(*)")).select_from(Blob)) == 2


def test_sqlite_runs_in_wal_mode_with_foreign_keys(db: Database) -> None:
    if not db.is_sqlite:
        pytest.skip("SQLite settings")
    with db.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000


def test_an_in_memory_sqlite_database_is_refused() -> None:
    with pytest.raises(ValueError, match="use a SQLite file"):
        Database("sqlite://")


def test_a_read_only_transaction_is_ended_and_a_writing_one_is_kept(db: Database) -> None:
    with db.session() as session:
        session.scalar(select(User))
        assert end_read_transaction(session)
        assert not session.in_transaction()
        session.execute(update(User).values(is_admin=True))  # a write not done through the unit of work
        assert not end_read_transaction(session)
        assert session.in_transaction()
        session.rollback()
        session.add(User(name="ada", password_hash="x"))
        assert not end_read_transaction(session)  # unflushed
        session.flush()
        assert not end_read_transaction(session)  # flushed, not committed
        session.commit()
        session.scalar(select(User))
        assert end_read_transaction(session)  # a new transaction that only read
