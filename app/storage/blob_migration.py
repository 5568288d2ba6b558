"""Moving blobs from one store to another (``podium storage migrate``), while the server runs.

Each blob is moved on its own: its contents are copied from the store its row names to the target
store, read back from there and hashed, and only when they hash to the row's sha256 and have its size
does one short transaction point the row at the target (``UPDATE ... WHERE store = <old>``, so a row that
something else moved meanwhile is left alone). Stopping at any moment loses nothing: a row points at its
old store until its copy is verified, and saving is idempotent, so running the command again resumes
where it stopped. Readers never see a half-moved blob: a reader that found the row in the database store
as its contents moved out reads the row again (``blobs.open_blob``).

Moving out of the database empties the row's ``data`` (that is the room it frees); a disk file or an S3
object that was moved stays where it was (removing contents is not this command's work).
New uploads keep going to ``PODIUM_BLOB_STORE``: set it to the target first, then migrate; the command
goes over the table until no row is left in the source stores.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import select, update

from app.storage.db import Database
from app.storage.enums import StoreName
from app.storage.models import Blob
from app.storage.stores import ContentMismatch, hash_stream

BATCH = 100


@dataclass(frozen=True)
class Moved:
    blob_id: int
    sha256: str
    size: int
    source: StoreName


@dataclass
class MigrationReport:
    moved: int = 0
    bytes: int = 0


def migrate_blobs(
    database: Database,
    target: StoreName,
    *,
    source: StoreName | None = None,
    on_moved: Callable[[Moved], None] = lambda moved: None,
) -> MigrationReport:
    """Move every blob not in ``target`` (only those in ``source``, if given) there; raises
    ``ContentMismatch`` on a blob whose copy does not verify (its row is left as it was)."""
    stores = database.blobs
    stores.get(target)  # configured, or StoreUnavailable before anything moves
    report = MigrationReport()
    after = 0
    while True:
        query = select(Blob.id, Blob.sha256, Blob.size, Blob.store).where(Blob.id > after, Blob.store != target)
        if source is not None:
            query = query.where(Blob.store == source)
        with database.session(read_only=True) as session:
            rows = session.execute(query.order_by(Blob.id).limit(BATCH)).all()
        if not rows:
            return report
        for row in rows:
            moved = Moved(row.id, row.sha256, row.size, StoreName(row.store))
            if _move(database, moved, target):
                report.moved += 1
                report.bytes += moved.size
                on_moved(moved)
            after = row.id


def _move(database: Database, blob: Moved, target: StoreName) -> bool:
    values: dict[str, object] = {"store": target}
    if blob.source == StoreName.DB:
        values["data"] = None
    try:
        return _copy_and_point(database, blob, target, values)
    except ContentMismatch as exc:
        raise ContentMismatch(f"blob {blob.blob_id}: {exc}; it stays in the {blob.source} store") from None


def _copy_and_point(database: Database, blob: Moved, target: StoreName, values: dict[str, object]) -> bool:
    stores = database.blobs
    into = stores.get(target)
    with database.session() as session:
        if target == StoreName.DB:
            # The database store's save is an UPDATE of the row (checking the hash), in the moving transaction.
            with stores.get(blob.source).open(session, blob.sha256) as stream:
                into.save(session, blob.sha256, stream)
        else:
            # The copy is made and checked in a read-only transaction, so that no write lock is held meanwhile.
            with database.session(read_only=True) as reading:
                with stores.get(blob.source).open(reading, blob.sha256) as stream:
                    into.save(reading, blob.sha256, stream)
                with into.open(reading, blob.sha256) as stream:
                    found, size = hash_stream(stream)
            if (found, size) != (blob.sha256, blob.size):
                raise ContentMismatch(
                    f"its copy in the {target} store hashes to {found} ({size} bytes), "
                    f"not {blob.sha256} ({blob.size} bytes)"
                )
        done = session.execute(update(Blob).where(Blob.id == blob.blob_id, Blob.store == blob.source).values(**values))
        session.commit()
        return bool(done.rowcount)  # type: ignore[attr-defined]


def verify_blob(database: Database, blob_id: int) -> bool:
    """Whether a blob's contents, read from its store, hash to its sha256 and have its size."""
    with database.session(read_only=True) as session:
        row = session.execute(select(Blob.sha256, Blob.size, Blob.store).where(Blob.id == blob_id)).one()
        with database.blobs.get(row.store).open(session, row.sha256) as stream:
            return hash_stream(stream) == (row.sha256, row.size)
