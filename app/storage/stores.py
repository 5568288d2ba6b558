"""Where blob contents live: one interface, three stores.

A blob is a row of ``blobs`` (its sha256, size and ``store``) and its contents, kept by the store the row
names: ``db`` (the row's own ``data`` column, for small embedded installs and the databases made before
the other stores existed), ``disk`` (a folder: the embedded default) or ``s3`` (an S3-compatible bucket,
``app.storage.s3``). Contents are addressed by their sha256, so saving the same contents twice stores them
once and a save that was interrupted can simply be done again. New blobs go to the store that
``PODIUM_BLOB_STORE`` names; every configured store stays readable, so a process reads a row wherever it
is kept while ``podium storage migrate`` moves rows from one store to another.

Stores copy in chunks of ``CHUNK`` bytes: no store holds a whole file in memory except ``db``, whose
column takes the contents as one value.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from sqlalchemy import select, update
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from app.storage.blob_store import CHUNK, BlobStore, ContentMismatch, StoreUnavailable, copy_hashed, hash_stream
from app.storage.enums import StoreName
from app.storage.models import Blob

__all__ = [
    "CHUNK",
    "BlobStore",
    "BlobStores",
    "ContentMismatch",
    "DatabaseStore",
    "DiskStore",
    "StoreUnavailable",
    "copy_hashed",
    "hash_stream",
]

if TYPE_CHECKING:
    from app.config import Settings


class DatabaseStore(BlobStore):
    """Contents in the row's ``data`` column (its row must exist when they are saved)."""

    name = StoreName.DB

    def save(self, session: Session, digest: str, source: BinaryIO) -> None:
        data = source.read()
        if hashlib.sha256(data).hexdigest() != digest:
            raise ContentMismatch(f"the contents do not hash to {digest}")
        session.execute(update(Blob).where(Blob.sha256 == digest).values(data=data))

    def open(self, session: Session, digest: str) -> BinaryIO:
        data = session.scalar(select(Blob.data).where(Blob.sha256 == digest))
        if data is None:
            raise LookupError(f"the database holds no contents for {digest}")
        return BytesIO(bytes(data))

    def delete(self, session: Session, digest: str) -> None:
        pass  # the contents are the row's: they go with it


class DiskStore(BlobStore):
    """Contents in a folder, one file per sha256 under two levels of folders (``ab/cd/abcd...``), written
    to a temporary name first and renamed when complete, so a file under its digest is always whole."""

    name = StoreName.DISK

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, digest: str) -> Path:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a sha256: {digest!r}")
        return self.root / digest[:2] / digest[2:4] / digest

    def save(self, session: Session, digest: str, source: BinaryIO) -> None:
        final = self.path(digest)
        if final.is_file():
            return
        partial = self.root / "partial"
        partial.mkdir(parents=True, exist_ok=True)
        temporary = partial / f"{digest}.{uuid.uuid4().hex}"
        try:
            with temporary.open("wb") as target:
                found, _ = copy_hashed(source, target)
                target.flush()
                os.fsync(target.fileno())
            if found != digest:
                raise ContentMismatch(f"the contents hash to {found}, not {digest}")
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(temporary, final)
        finally:
            temporary.unlink(missing_ok=True)

    def open(self, session: Session, digest: str) -> BinaryIO:
        try:
            return self.path(digest).open("rb")
        except FileNotFoundError:
            raise LookupError(f"{self.root} holds no file for {digest}") from None

    def delete(self, session: Session, digest: str) -> None:
        self.path(digest).unlink(missing_ok=True)

    def local_path(self, digest: str) -> Path | None:
        path = self.path(digest)
        return path if path.is_file() else None


def default_blob_dir(database_url: str) -> Path:
    """Where the disk store keeps its files unless ``PODIUM_BLOB_DIR`` says: a folder ``blobs`` beside a
    SQLite database (so the embedded install's data is one folder), else ``var/blobs``."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite" and url.database:
        return Path(url.database).parent / "blobs"
    return Path("var/blobs")


class BlobStores:
    """The stores of one process: the one new blobs go to (``writer``) and every one rows may name."""

    def __init__(
        self, write: StoreName, *, disk_root: Path | None = None, s3_bucket: str = "", s3_prefix: str = ""
    ) -> None:
        self.write = StoreName(write)
        self._stores: dict[StoreName, BlobStore] = {StoreName.DB: DatabaseStore()}
        if disk_root is not None:
            self._stores[StoreName.DISK] = DiskStore(disk_root)
        if s3_bucket:
            from app.storage.s3 import S3Store  # boto3 is imported only where S3 is used

            self._stores[StoreName.S3] = S3Store(s3_bucket, s3_prefix)
        self.get(self.write)  # the store new blobs go to must exist

    @classmethod
    def database_only(cls, database_url: str | None = None) -> BlobStores:
        """New contents in rows: what a ``Database`` made without settings uses (scripts, tests); with the
        database's address, the disk store's default folder is readable too."""
        return cls(StoreName.DB, disk_root=None if database_url is None else default_blob_dir(database_url))

    @classmethod
    def from_settings(cls, settings: Settings) -> BlobStores:
        return cls(
            StoreName(settings.blob_store),
            disk_root=settings.blob_dir or default_blob_dir(settings.database_url),
            s3_bucket=settings.s3_bucket,
            s3_prefix=settings.s3_prefix,
        )

    @property
    def writer(self) -> BlobStore:
        return self.get(self.write)

    def get(self, name: str) -> BlobStore:
        try:
            return self._stores[StoreName(name)]
        except (KeyError, ValueError):
            raise StoreUnavailable(
                f"the '{name}' store is not configured in this process: configure it "
                "(PODIUM_S3_BUCKET and the AWS variables for s3)"
            ) from None

    def copy_to_file(self, session: Session, store: str, digest: str, target: BinaryIO) -> tuple[str, int]:
        """Copy the contents to ``target``; their sha256 and size as read."""
        with self.get(store).open(session, digest) as source:
            return copy_hashed(source, target)
