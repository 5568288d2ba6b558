"""What the application holds for its lifetime: settings, database, gold cache and job queue."""

from __future__ import annotations

from dataclasses import dataclass

from app.config import Settings
from app.services.gold import GoldCache
from app.services.jobs import JobQueue
from app.services.submissions import Limits
from app.storage.db import Database


@dataclass
class AppState:
    settings: Settings
    db: Database
    gold_cache: GoldCache
    #: Where committed jobs go; ``None`` until a pool is started (jobs then wait in the database).
    queue: JobQueue | None = None

    @property
    def limits(self) -> Limits:
        s = self.settings
        return Limits(s.max_upload_bytes, s.max_unzipped_bytes, s.max_zip_entries)
