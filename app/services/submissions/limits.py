"""How large a submission may be: the server's limits, a phase's own, and the refusal of a file over them."""

from __future__ import annotations

from dataclasses import dataclass

from app.config import Settings
from app.services.errors import UploadTooLarge
from app.storage.models import Phase

MAX_METHOD_NAME = 200
MAX_METHOD_DESCRIPTION = 20_000
MAX_FILE_NAME = 255


@dataclass(frozen=True)
class Limits:
    """The server's size limits for uploads (a phase may lower or raise ``max_upload_bytes``)."""

    max_upload_bytes: int
    max_unzipped_bytes: int
    max_zip_entries: int
    #: The operator's storage quotas of a competition and of a team in it, where a competition sets none (0: none).
    storage_quota_bytes: int = 0
    team_storage_quota_bytes: int = 0

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(
            settings.max_upload_bytes,
            settings.max_unzipped_bytes,
            settings.max_zip_entries,
            settings.storage_quota_bytes,
            settings.team_storage_quota_bytes,
        )


def upload_limit(phase: Phase, limits: Limits) -> int:
    """The largest file this phase accepts."""
    return phase.max_upload_bytes or limits.max_upload_bytes


def describe_size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n} bytes"


def too_large(limit: int, size: int | None = None) -> UploadTooLarge:
    shown_size, shown_limit = describe_size(size or 0), describe_size(limit)
    if shown_size == shown_limit:  # just over the limit: rounded, both would read "2.0 MB"
        shown_size, shown_limit = f"{size:,} bytes", f"{limit:,} bytes"
    got = f"The file is {shown_size}; " if size is not None else "The upload is too large; "
    return UploadTooLarge(f"{got}this phase accepts files of at most {shown_limit}.", limit=limit)
