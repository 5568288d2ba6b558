"""The columns of a row that a background job works on (a submission being scored, a baseline run).

A job's state lives on its row, never in a message broker: the status, how many attempts claimed
it, the lease of the worker holding it (renewed by heartbeats; a lease that expires means the worker
died and the job is resumed) and when a message for it was last handed to a queue. The rules that
read and write these columns are in ``app.services.jobs.lease``.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from app.storage.types import UTCDateTime, utcnow


class LeasedRow:
    """Mixin of the models whose rows are jobs."""

    attempts: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: When a message for the job was last being handed to a queue (stamped before the send).
    enqueued_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    #: ``enqueued_at`` copied once the queue took that message; a row whose stamp was never confirmed
    #: (the process died between its commit and its send) is sent again within seconds.
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    #: Who holds (or last held) the lease: host, process and thread.
    worker: Mapped[str | None] = mapped_column(String(200))
