"""Direct uploads: a large file sent by its client straight to the s3 store's bucket (presigned multipart upload),
so that the web process never carries it.

The object lands under ``<prefix>direct/<id>``, a staging key that no blob row names. Its client gets one
presigned ``UploadPart`` link per part (``start``); once it has sent them, the server completes the upload
(``complete``), reads the object back in chunks to hash it (``read``), and the submission's ordinary path stores
it under its sha256 with a copy inside the bucket (``S3Store.save_staged``). The staging object is deleted then
(``discard``), whatever the outcome. What an upload never completed or a crash left under the staging prefix is
removed by ``clean`` once it is older than the time an upload may take (``PODIUM_DIRECT_UPLOAD_HOURS``), which
every sweeper calls with the collector; a bucket lifecycle rule aborting incomplete multipart uploads after a day
does the same on the storage side.
"""

from __future__ import annotations

import contextlib
import math
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import BinaryIO, cast

from app.storage.enums import StoreName
from app.storage.s3 import PART, S3Store
from app.storage.stores import BlobStores

STAGING = "direct/"
#: S3 takes at most 10,000 parts; fewer links keep the answer small (a 2 GB file: 256 parts of 8 MB).
MAX_PARTS = 1000
#: Beyond the time an upload may take, before its leftovers are removed: a completion begun just in time
#: still reads the object back.
GRACE = timedelta(hours=1)
#: S3's smallest part but the last.
MIN_PART = 5 * 1024 * 1024


class NotOffered(LookupError):
    """This process's new files do not go to object storage: no direct upload."""


class UploadIncomplete(ValueError):
    """The store refused to complete the upload (missing or altered parts, an unknown upload); says why."""


@dataclass(frozen=True)
class Staged:
    key: str
    upload_id: str
    part_size: int
    urls: list[str]


def part_size(size: int) -> int:
    """The part size for a file of ``size`` bytes: ``PART``, larger where that would need over ``MAX_PARTS``."""
    mib = 1024 * 1024
    return max(PART, math.ceil(size / MAX_PARTS / mib) * mib)


class DirectUploads:
    def __init__(self, store: S3Store) -> None:
        self.store = store

    def start(self, size: int, expires_seconds: int) -> Staged:
        """A new multipart upload of ``size`` bytes, with a presigned link for each part."""
        key = f"{self.store.prefix}{STAGING}{int(time.time())}-{uuid.uuid4().hex}"
        client, bucket = self.store.client, self.store.bucket
        upload_id = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        part = part_size(size)
        urls = [
            client.generate_presigned_url(
                "upload_part",
                Params={"Bucket": bucket, "Key": key, "UploadId": upload_id, "PartNumber": number},
                ExpiresIn=expires_seconds,
            )
            for number in range(1, max(1, math.ceil(size / part)) + 1)
        ]
        return Staged(key, upload_id, part, urls)

    def complete(self, key: str, upload_id: str, etags: list[str]) -> None:
        """Put the parts together (part ``n`` is ``etags[n - 1]``); raises ``UploadIncomplete``."""
        from botocore.exceptions import ClientError  # botocore loads where S3 is used (``app.storage.s3``)

        parts = [{"PartNumber": n, "ETag": etag} for n, etag in enumerate(etags, start=1)]
        try:
            self.store.client.complete_multipart_upload(
                Bucket=self.store.bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}
            )
        except ClientError as exc:
            error = exc.response.get("Error", {})
            raise UploadIncomplete(f"{error.get('Code', 'refused')}: {error.get('Message', '')}".rstrip(": ")) from None

    def read(self, key: str) -> BinaryIO:
        """The completed object, as a stream."""
        return cast(BinaryIO, self.store.client.get_object(Bucket=self.store.bucket, Key=key)["Body"])

    def discard(self, key: str, upload_id: str) -> None:
        """Remove the upload, complete or not (nothing if it is gone)."""
        from botocore.exceptions import ClientError

        client, bucket = self.store.client, self.store.bucket
        with contextlib.suppress(ClientError):  # completed already, or aborted: the object (if any) goes next
            client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
        client.delete_object(Bucket=bucket, Key=key)

    def clean(self, older_than: datetime) -> int:
        """Abort the uploads started before ``older_than`` (less ``GRACE``) and delete the staging objects they
        left; how many were removed. An upload's start is read from its key, not from the store's ``Initiated``,
        which not every S3-compatible server keeps (moto's answers a fixed date)."""
        client, bucket = self.store.client, self.store.bucket
        prefix = f"{self.store.prefix}{STAGING}"
        cutoff = (older_than - GRACE).timestamp()

        def stale(key: str) -> bool:
            started = key[len(prefix) :].partition("-")[0]
            return not started.isdigit() or int(started) < cutoff

        removed = 0
        for page in client.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=prefix):
            for upload in page.get("Uploads", []):
                if stale(upload["Key"]):
                    client.abort_multipart_upload(Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])
                    removed += 1
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for found in page.get("Contents", []):
                if stale(found["Key"]):
                    client.delete_object(Bucket=bucket, Key=found["Key"])
                    removed += 1
        return removed


def direct_uploads(stores: BlobStores) -> DirectUploads:
    """The direct uploads of this process's stores; ``NotOffered`` unless new files go to the s3 store."""
    if stores.write != StoreName.S3:
        raise NotOffered(
            f"this server keeps files in its '{stores.write}' store, not in object storage: "
            "send the file to the phase's submissions"
        )
    return DirectUploads(cast(S3Store, stores.writer))
