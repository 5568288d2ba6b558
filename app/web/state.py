"""What the application holds for its lifetime: settings, database, the caches (parsed gold,
leaderboards), the login throttle and the job queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from app.config import Settings
from app.services.accounts.throttle import LoginThrottle
from app.services.boards.cache import BoardCache
from app.services.jobs.kinds import JobQueue
from app.services.scoring.gold import GoldCache
from app.services.scoring.handoff import ParsedSubmissions
from app.services.submissions.limits import Limits
from app.storage.db import Database


class Broker(Protocol):
    """What the web tier asks of the message broker in the distributed mode (``/readyz``, ``/metrics``)."""

    def check(self) -> None:
        """Raise if the broker cannot be reached (within a short timeout)."""

    def queue_lengths(self) -> dict[str, int]:
        """Messages waiting per queue."""


@dataclass
class AppState:
    settings: Settings
    db: Database
    gold_cache: GoldCache
    #: The leaderboards, as pages, exports and the JSON API read them.
    boards: BoardCache
    #: Failed logins, counted in the database (shared by every process).
    throttle: LoginThrottle
    #: Where committed jobs go; ``None`` until a pool is started (jobs then wait in the database).
    queue: JobQueue | None = None
    #: The broker of the distributed mode; ``None`` in the embedded mode.
    broker: Broker | None = None
    #: Uploads parsed at validation, waiting for their jobs; only where this process scores (embedded).
    handoff: ParsedSubmissions | None = None

    @property
    def limits(self) -> Limits:
        return Limits.of(self.settings)
