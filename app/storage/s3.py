"""The S3 store: blob contents as objects of an S3-compatible bucket (AWS S3, MinIO, Cloudflare R2, Ceph).

The client is boto3's, configured the way every S3 tool is: ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_DEFAULT_REGION`` (or ``AWS_REGION``), ``AWS_ENDPOINT_URL`` for a server
other than AWS, a profile, an instance role. Podium's own settings name only the bucket and a key prefix
(``PODIUM_S3_BUCKET``, ``PODIUM_S3_PREFIX``). An object's key is the prefix and the contents' sha256.

Uploads go through boto3's managed transfer, in parts of ``PART`` bytes, at most ``PARTS_IN_MEMORY`` of
them in memory at once, so a 2 GB file costs the process tens of MB; reads are streamed.

boto3 and botocore are imported where a store is used, not with this module: ``app.storage.direct`` (and through
it the API) imports it on every server, most of which keep no file in S3.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from sqlalchemy.orm import Session

from app.storage.blob_store import BlobStore
from app.storage.enums import StoreName

if TYPE_CHECKING:
    from boto3.s3.transfer import TransferConfig
    from botocore.exceptions import ClientError

PART = 8 * 1024 * 1024
PARTS_IN_MEMORY = 4


@functools.cache
def _transfer() -> TransferConfig:
    from boto3.s3.transfer import TransferConfig

    config = TransferConfig(
        multipart_threshold=PART,
        multipart_chunksize=PART,
        max_concurrency=PARTS_IN_MEMORY,
        max_io_queue=PARTS_IN_MEMORY,
    )
    # s3transfer's own setting (boto3's constructor does not take it): how many parts a file upload reads ahead.
    config.max_in_memory_upload_chunks = PARTS_IN_MEMORY
    return config


def _missing(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}


class S3Store(BlobStore):
    name = StoreName.S3

    def __init__(self, bucket: str, prefix: str = "") -> None:
        self.bucket = bucket
        self.prefix = prefix
        self._lock = threading.Lock()
        self._client: Any = None
        self._pid = 0

    @property
    def client(self) -> Any:
        # A client per process: a forked worker child must not share its parent's connections.
        with self._lock:
            if self._client is None or self._pid != os.getpid():
                import boto3

                self._client = boto3.session.Session().client("s3")
                self._pid = os.getpid()
            return self._client

    def key(self, digest: str) -> str:
        return f"{self.prefix}{digest}"

    def exists(self, digest: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self.key(digest))
        except ClientError as exc:
            if _missing(exc):
                return False
            raise
        return True

    def save(self, session: Session, digest: str, source: BinaryIO) -> None:
        # An object appears whole or not at all, so one filed under its digest is complete; the digest was
        # computed as the contents were spooled (``blobs.Content``) and ``podium storage migrate`` reads each
        # object back to check it.
        if self.exists(digest):
            return
        self.client.upload_fileobj(source, self.bucket, self.key(digest), Config=_transfer())

    def save_staged(self, session: Session, digest: str, source: BinaryIO, staged: str) -> None:
        # A copy inside the bucket (in parts for a large object, ``UploadPartCopy``): the bytes never pass
        # through this process again.
        if self.exists(digest):
            return
        copy = {"Bucket": self.bucket, "Key": staged}
        self.client.copy(copy, self.bucket, self.key(digest), Config=_transfer())

    def delete(self, session: Session, digest: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.key(digest))  # S3 answers 204 for a missing key

    def open(self, session: Session, digest: str) -> BinaryIO:
        from botocore.exceptions import ClientError

        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=self.key(digest))
        except ClientError as exc:
            if _missing(exc):
                raise LookupError(f"s3://{self.bucket}/{self.key(digest)} does not exist") from None
            raise
        return cast(BinaryIO, answer["Body"])
