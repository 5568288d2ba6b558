"""The interface every blob store implements (``app.storage.stores`` lists the stores), and the chunked
copying and hashing they share."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from pathlib import Path
from typing import BinaryIO, ClassVar

from sqlalchemy.orm import Session

from app.storage.enums import StoreName

CHUNK = 1024 * 1024


class StoreUnavailable(LookupError):
    """A row names a store this process has not been configured for (``s3`` without a bucket)."""


class ContentMismatch(ValueError):
    """What a store was given or holds does not hash to the digest it is filed under."""


def copy_hashed(source: BinaryIO, target: BinaryIO) -> tuple[str, int]:
    """Copy ``source`` to ``target`` in chunks; the sha256 and size of what was copied."""
    digest = hashlib.sha256()
    size = 0
    while chunk := source.read(CHUNK):
        digest.update(chunk)
        target.write(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


def hash_stream(source: BinaryIO) -> tuple[str, int]:
    """The sha256 and size of what ``source`` holds from its position to its end, read in chunks."""
    digest = hashlib.sha256()
    size = 0
    while chunk := source.read(CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


class BlobStore(ABC):
    """Contents filed by sha256. ``save`` and ``delete`` are idempotent; ``open`` raises ``LookupError`` for
    contents it lacks."""

    name: ClassVar[StoreName]

    @abstractmethod
    def save(self, session: Session, digest: str, source: BinaryIO) -> None:
        """Keep what ``source`` holds (from its position) under ``digest``; refuse (``ContentMismatch``)
        contents that do not hash to it."""

    @abstractmethod
    def open(self, session: Session, digest: str) -> BinaryIO:
        """A stream of the contents filed under ``digest``; the caller closes it."""

    @abstractmethod
    def delete(self, session: Session, digest: str) -> None:
        """Remove the contents filed under ``digest`` (nothing if there are none); ``app.storage.collect`` calls
        it once no row names them."""

    def save_staged(self, session: Session, digest: str, source: BinaryIO, staged: str) -> None:
        """Keep contents that this store already holds at ``staged`` (a direct upload, hashed to ``digest``
        as it was read back) under ``digest``; a store that holds no such thing saves ``source``."""
        self.save(session, digest, source)

    def local_path(self, digest: str) -> Path | None:
        """A file on this machine that holds the contents, where the store keeps them as one."""
        return None
