"""Removing the blobs nothing refers to any more (a deleted submission's file, say), rows and contents.

A blob is referred to by any column with a foreign key to ``blobs.id`` (read from the models, so a new one is
covered without a change here): a submission's file, a phase's gold or code inputs, a task's or a phase's file,
a code run's program. A blob created less than ``grace`` ago is left alone, for a service that stores a blob
and refers to it in a later transaction.

Safe against an upload of the same contents while the collector runs (both sides lock the blob's row):

- the collector takes each candidate's row ``FOR UPDATE``, checks again that nothing refers to it, deletes the
  row, removes the contents from their store, and only then commits;
- an upload that finds the row takes it ``FOR KEY SHARE`` (``blobs.put_content``) until it commits the row
  that refers to it. If the upload got there first, the collector waits, then finds the reference and keeps
  the blob; if the collector got there first, the upload waits, then finds no row and stores the contents
  again under a new one (the old contents are gone by then, so nothing half-removed is reused).

On SQLite a write transaction holds the database's write lock from its start (``app.storage.db``), so the two
cannot interleave at all. A commit that fails after the contents were removed would leave a row without its
contents; the collector removes them last of all, after the row's deletion was flushed, to keep that window
as short as it can be.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Column, ColumnElement, delete, exists, select
from sqlalchemy.orm import Session

from app.storage.blobs import stores_of
from app.storage.db import Database
from app.storage.models import Base, Blob
from app.storage.types import utcnow

#: What ``podium storage collect`` and the sweeper leave alone: blobs younger than this.
DEFAULT_GRACE = timedelta(hours=1)


@dataclass(frozen=True)
class Collected:
    files: int
    bytes: int


def references() -> Iterator[Column[int]]:
    """Every column that refers to a blob."""
    for table in Base.metadata.sorted_tables:
        for key in table.foreign_keys:
            if key.column.table.name == Blob.__tablename__:
                yield key.parent


def _unreferenced() -> list[ColumnElement[bool]]:
    return [~exists().where(column == Blob.id) for column in references()]


def candidates(session: Session, older_than: datetime) -> list[int]:
    """The blobs nothing refers to, created before ``older_than``."""
    return list(session.scalars(select(Blob.id).where(Blob.created_at < older_than, *_unreferenced())))


def _collect_one(session: Session, blob_id: int) -> int | None:
    """Delete the blob if nothing refers to it now; its size, or ``None`` when it was kept."""
    blob = session.execute(
        select(Blob.store, Blob.sha256, Blob.size).where(Blob.id == blob_id).with_for_update()
    ).one_or_none()
    if blob is None or session.scalar(select(Blob.id).where(Blob.id == blob_id, *_unreferenced())) is None:
        return None
    session.execute(delete(Blob).where(Blob.id == blob_id))
    session.flush()
    stores_of(session).get(blob.store).delete(session, blob.sha256)
    return int(blob.size)


def collect(db: Database, *, grace: timedelta = DEFAULT_GRACE, now: datetime | None = None) -> Collected:
    """Remove every blob nothing refers to (older than ``grace``), one short transaction each."""
    with db.session(read_only=True) as session:
        found = candidates(session, (now or utcnow()) - grace)
    files = size = 0
    for blob_id in found:
        with db.session() as session:
            removed = _collect_one(session, blob_id)
            session.commit()
        if removed is not None:
            files, size = files + 1, size + removed
    return Collected(files, size)


def abandoned_direct_uploads(db: Database, older_than: timedelta, *, now: datetime | None = None) -> int:
    """Abort the direct uploads (``app.storage.direct``) started more than ``older_than`` ago and never completed,
    and remove what they left in the bucket; 0 where new files do not go to object storage."""
    from app.storage.direct import NotOffered, direct_uploads  # boto3 only where the s3 store is used

    try:
        uploads = direct_uploads(db.blobs)
    except NotOffered:
        return 0
    return uploads.clean((now or utcnow()) - older_than)
