"""The blob API: file contents addressed by sha256 and stored once per content, in the process's store.

Services call these functions with their session; the session carries the process's stores
(``Database(url, blobs=BlobStores.from_settings(settings))``, ``app.storage.stores``), so a service never
knows where contents live. A row keeps its size and sha256 in the database whatever the store, so facts
about files never read their contents.

- ``put_content`` stores a ``Content`` (bytes, or a file spooled and hashed as it arrived) without reading
  it whole unless the store is the database; ``put_blob`` does the same for bytes.
- ``read_blob`` gives the contents as bytes (a gold, a predictions file: what a parser takes whole);
  ``open_blob`` a stream (``open_stream`` one that outlives the session, for a download); ``blob_path`` a
  local file (the disk store's own, else a temporary copy), for a worker that hands a program or a large
  input to a process; ``fetch_blob`` the same, copied to a file the caller names and keeps.
"""

from __future__ import annotations

import hashlib
import tempfile
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from io import BytesIO
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.storage.db import STORES_KEY
from app.storage.enums import StoreName
from app.storage.models import Blob
from app.storage.stores import CHUNK, BlobStores

_DATABASE_ONLY = BlobStores.database_only()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Content:
    """Contents on their way into a store, with their size and sha256: bytes in memory, or a file (a
    temporary one, spooled to disk past ``CHUNK`` bytes) that was hashed while it was written.

    ``open()`` gives the file from its start to one reader at a time; ``read()`` the whole contents, for
    the checks that parse a file (bounded by the phase's upload limit)."""

    def __init__(self, file: BinaryIO, size: int, sha256: str) -> None:
        self._file = file
        self.size = size
        self.sha256 = sha256
        #: Where the process's store already holds these contents (a direct upload's object, read back and
        #: hashed): storing them copies that object inside the store instead of sending the file again.
        self.staged: str | None = None
        # An upload's temporary file lives as long as its request holds the upload, however that ends (an
        # error's traceback included: a finalizer runs before the collector finalizes the file itself).
        self._close = weakref.finalize(self, file.close)

    @classmethod
    def of_bytes(cls, data: bytes, sha256: str | None = None) -> Content:
        return cls(BytesIO(data), len(data), sha256 or sha256_hex(data))

    @classmethod
    def spool(cls, chunks: Iterable[bytes] | BinaryIO) -> Content:
        """The contents of ``chunks`` (or of a stream, read in chunks), written to a temporary file and
        hashed as they come."""
        if hasattr(chunks, "read"):
            chunks = iter(partial(chunks.read, CHUNK), b"")
        file = tempfile.SpooledTemporaryFile(max_size=CHUNK)  # noqa: SIM115 (the Content owns it)
        digest = hashlib.sha256()
        size = 0
        for chunk in chunks:
            digest.update(chunk)
            file.write(chunk)
            size += len(chunk)
        return cls(file, size, digest.hexdigest())  # type: ignore[arg-type]

    @contextmanager
    def open(self) -> Iterator[BinaryIO]:
        self._file.seek(0)
        yield self._file

    def read(self) -> bytes:
        if isinstance(self._file, BytesIO):
            return self._file.getvalue()
        with self.open() as file:
            return file.read()

    def head(self, size: int) -> bytes:
        with self.open() as file:
            return file.read(size)

    def close(self) -> None:
        self._close()

    def __enter__(self) -> Content:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def stores_of(session: Session) -> BlobStores:
    """The stores the session's process was configured with (contents in rows where none were)."""
    stores = session.info.get(STORES_KEY)
    return stores if isinstance(stores, BlobStores) else _DATABASE_ONLY


def put_content(session: Session, content: Content) -> Blob:
    """The blob holding ``content``: the existing row for that sha256, or a new one (flushed) whose
    contents the process's store keeps."""
    digest = content.sha256
    # FOR KEY SHARE: the collector (``app.storage.collect``) cannot delete the row until the caller's rows that
    # refer to it are committed; a row it deleted meanwhile is not found, and the contents are stored again.
    existing = session.scalar(select(Blob).where(Blob.sha256 == digest).with_for_update(read=True, key_share=True))
    if existing is not None:
        return existing
    store = stores_of(session).writer
    if store.name == StoreName.DB:
        blob = Blob(sha256=digest, size=content.size, store=store.name, data=content.read())
    else:
        # Contents first, row second: a committed row never names contents the store lacks (a rolled back
        # upload may leave contents no row names, which a later upload of the same file reuses).
        with content.open() as source:
            if content.staged is not None:
                store.save_staged(session, digest, source, content.staged)
            else:
                store.save(session, digest, source)
        blob = Blob(sha256=digest, size=content.size, store=store.name, data=None)
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


def put_blob(session: Session, data: bytes, sha256: str | None = None) -> Blob:
    """The blob holding ``data`` (see ``put_content``)."""
    return put_content(session, Content.of_bytes(data, sha256))


def _located(session: Session, blob_id: int) -> tuple[str, str]:
    row = session.execute(select(Blob.store, Blob.sha256).where(Blob.id == blob_id)).one_or_none()
    if row is None:
        raise LookupError(f"blob {blob_id} does not exist")
    return row.store, row.sha256


def open_stream(session: Session, blob_id: int) -> BinaryIO:
    """A stream of a blob's contents that the caller closes; it stays readable after the session ends (a
    download answered while its request's transaction is over). Raises ``LookupError`` if there is no such blob."""
    store, digest = _located(session, blob_id)
    try:
        return stores_of(session).get(store).open(session, digest)
    except LookupError:
        # ``podium storage migrate`` may have moved the contents since the row was read: read it again.
        moved, _ = _located(session, blob_id)
        if moved == store:
            raise
        return stores_of(session).get(moved).open(session, digest)


@contextmanager
def open_blob(session: Session, blob_id: int) -> Iterator[BinaryIO]:
    """A stream of a blob's contents, closed afterwards; raises ``LookupError`` if there is no such blob."""
    with open_stream(session, blob_id) as stream:
        yield stream


def read_blob(session: Session, blob_id: int) -> bytes:
    """The contents of a blob; raises ``LookupError`` if there is no such blob."""
    with open_blob(session, blob_id) as stream:
        return stream.read()


@contextmanager
def blob_path(session: Session, blob_id: int, folder: Path | None = None) -> Iterator[Path]:
    """A local file holding a blob's contents, for reading only: the disk store's own file, else a copy in
    a temporary file (in ``folder``, if given) removed afterwards."""
    store, digest = _located(session, blob_id)
    stores = stores_of(session)
    local = stores.get(store).local_path(digest)
    if local is not None:
        yield local
        return
    with tempfile.NamedTemporaryFile(dir=folder, prefix="blob-", delete=True) as target:
        stores.copy_to_file(session, store, digest, target)  # type: ignore[arg-type]
        target.flush()
        yield Path(target.name)


def fetch_blob(session: Session, blob_id: int, target: Path) -> Path:
    """A local file holding a blob's contents, for reading only: the disk store's own file, else ``target``,
    written in chunks (a worker's program of hundreds of MB never sits in its memory). Raises ``LookupError``."""
    store, digest = _located(session, blob_id)
    stores = stores_of(session)
    local = stores.get(store).local_path(digest)
    if local is not None:
        return local
    with target.open("wb") as sink:
        stores.copy_to_file(session, store, digest, sink)
    return target


def blob_facts(session: Session, blob_ids: list[int]) -> dict[int, tuple[int, str]]:
    """``{blob id: (size, sha256)}`` without loading any contents."""
    if not blob_ids:
        return {}
    rows = session.execute(select(Blob.id, Blob.size, Blob.sha256).where(Blob.id.in_(blob_ids)))
    return {row.id: (row.size, row.sha256) for row in rows}
