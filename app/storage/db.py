"""The engine and its sessions.

SQLite (the embedded default) is set up for several threads writing at once: WAL so that readers
never wait for the writer, a busy timeout so that writers queue instead of failing, foreign keys on,
and write transactions that start with ``BEGIN IMMEDIATE``. The last one matters for correctness:
a transaction that reads and then writes (counting a team's submissions, then adding one) takes the
database's write lock before its first read, so two of them cannot interleave. Read-only sessions
start with a plain ``BEGIN`` and never wait for writers.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.orm import Session

from app.storage.stores import BlobStores

if TYPE_CHECKING:
    from app.config import Settings

#: The key of ``Session.info`` that holds the process's blob stores (``app.storage.blobs.stores_of``).
STORES_KEY = "blob_stores"

_READ_ONLY = "podium_read_only"
BUSY_TIMEOUT_SECONDS = 30


def _sqlite_on_connect(dbapi_connection: Any, connection_record: Any) -> None:
    # Take transaction control away from the sqlite3 module, which would otherwise begin
    # transactions on its own (deferred) at the first write; ``_sqlite_on_begin`` emits BEGIN.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_SECONDS * 1000}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_on_begin(connection: Connection) -> None:
    read_only = connection.get_execution_options().get(_READ_ONLY, False)
    connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


_WROTE = "podium_wrote"
_READS = ("SELECT", "PRAGMA", "BEGIN", "SAVEPOINT", "RELEASE", "ROLLBACK", "SHOW", "SET")


def _forget_writes(connection: Connection) -> None:
    connection.info.pop(_WROTE, None)


def _note_writes(connection: Connection, cursor: Any, statement: str, *args: Any) -> None:
    if not statement.lstrip()[:9].upper().startswith(_READS):
        connection.info[_WROTE] = True


def create_engine_for(url: str, *, pre_ping: bool = True) -> Engine:
    """An engine for ``url``; a SQLite file's folder is created if it is missing. ``pre_ping``: test
    each pooled connection before use (a round trip per transaction), so that a request never fails
    on a connection the database closed; callers that retry transient errors anyway (the workers'
    jobs) do without."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        engine = create_engine(parsed, pool_pre_ping=pre_ping)
    else:
        engine = _create_sqlite_engine(url)
    # Remember whether a transaction has written, for ``end_read_transaction``.
    event.listen(engine, "begin", _forget_writes)
    event.listen(engine, "before_cursor_execute", _note_writes)
    return engine


def _create_sqlite_engine(url: str) -> Engine:
    parsed = make_url(url)
    database = parsed.database or ""
    if not database or database == ":memory:" or database.startswith("file:"):
        raise ValueError(f"use a SQLite file, not {url!r}: several connections must see the same database")
    Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_SECONDS, "check_same_thread": False})
    event.listen(engine, "connect", _sqlite_on_connect)
    event.listen(engine, "begin", _sqlite_on_begin)
    return engine


def end_read_transaction(session: Session) -> bool:
    """End the session's transaction if it has only read so far, so that no lock or snapshot is
    held during long work that follows; returns whether it did. A transaction that has written
    anything (or holds unflushed changes) is left open for its owner to commit. Loaded objects are
    expired and reload on next access."""
    if session.new or session.dirty or session.deleted:
        return False
    if session.in_transaction() and session.connection().info.get(_WROTE):
        return False
    session.rollback()
    return True


class Database:
    """An engine plus the two kinds of session the application opens on it."""

    def __init__(self, url: str, *, pre_ping: bool = True, blobs: BlobStores | None = None) -> None:
        self.url = url
        #: Where blob contents are kept (``app.storage.blobs`` finds them on each session); by default new ones
        #: go to rows, and those in the disk store's default folder are read there.
        self.blobs = blobs or BlobStores.database_only(url)
        self.engine = create_engine_for(url, pre_ping=pre_ping)
        self._read_engine = self.engine.execution_options(**{_READ_ONLY: True})

    @classmethod
    def from_settings(cls, settings: Settings, *, pre_ping: bool = True) -> Database:
        """The database of ``settings``, with the blob stores they configure."""
        return cls(settings.database_url, pre_ping=pre_ping, blobs=BlobStores.from_settings(settings))

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    def session(self, *, read_only: bool = False, info: Mapping[str, Any] | None = None) -> Session:
        """A new session; the caller commits (one commit per request or job) and closes it.

        ``info`` is copied to ``Session.info`` (the job queue travels there, beside the blob stores).
        Objects stay usable after commit (``expire_on_commit=False``), so a request can answer with what
        it just wrote.
        """
        bind = self._read_engine if read_only else self.engine
        return Session(bind=bind, expire_on_commit=False, info={STORES_KEY: self.blobs, **(info or {})})

    def dispose(self) -> None:
        self.engine.dispose()


@contextmanager
def scratch_database(server_url: str, prefix: str) -> Iterator[str]:
    """A fresh PostgreSQL database named ``<prefix>_<random>`` on the server of ``server_url``,
    dropped (with its connections) on exit; yields its URL. For tests and benchmarks."""
    url = make_url(server_url)
    name = f"{prefix}_{secrets.token_hex(4)}"
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
