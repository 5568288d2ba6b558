"""The blob store: file contents in the database, addressed by sha256 and stored once per content."""

from __future__ import annotations

import hashlib

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.storage.models import Blob


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def put_blob(session: Session, data: bytes, sha256: str | None = None) -> Blob:
    """The blob holding ``data``: the existing row for that content, or a new one (flushed)."""
    digest = sha256 or sha256_hex(data)
    existing = session.scalar(select(Blob).where(Blob.sha256 == digest))
    if existing is not None:
        return existing
    blob = Blob(sha256=digest, size=len(data), data=data)
    try:
        # A savepoint, so that losing a race with another transaction storing the same content
        # costs only this insert, not the caller's transaction.
        with session.begin_nested():
            session.add(blob)
    except IntegrityError:
        existing = session.scalar(select(Blob).where(Blob.sha256 == digest))
        if existing is None:
            raise
        return existing
    return blob


def read_blob(session: Session, blob_id: int) -> bytes:
    """The contents of a blob; raises ``LookupError`` if there is no such blob."""
    data = session.scalar(select(Blob.data).where(Blob.id == blob_id))
    if data is None:
        raise LookupError(f"blob {blob_id} does not exist")
    return bytes(data)


def blob_facts(session: Session, blob_ids: list[int]) -> dict[int, tuple[int, str]]:
    """``{blob id: (size, sha256)}`` without loading any contents."""
    if not blob_ids:
        return {}
    rows = session.execute(select(Blob.id, Blob.size, Blob.sha256).where(Blob.id.in_(blob_ids)))
    return {row.id: (row.size, row.sha256) for row in rows}
