"""Hosted baseline runs: a baseline system run by the server on a phase's public inputs.

A run is a job on the ``gpu`` queue with the same lease and heartbeat as a scoring job. Its
progress (``done`` of ``total``, when the last report came) and the last lines of its log are
stored on the row, so any web process can show them live. On success its output becomes a
submission of the competition (``is_baseline``) scored by the ordinary path.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.storage.enums import RunStatus
from app.storage.models.base import Base
from app.storage.models.lease import LeasedRow
from app.storage.types import EnumText, UTCDateTime, one_of


class BaselineRun(LeasedRow, Base):
    """One run of a baseline system on one phase."""

    __tablename__ = "baseline_runs"
    __table_args__ = (
        CheckConstraint(one_of("status", RunStatus), name="status"),
        Index(None, "phase_id", "created_at"),
        Index(None, "status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    requested_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    baseline: Mapped[str] = mapped_column(String(100))
    baseline_version: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    status: Mapped[RunStatus] = mapped_column(EnumText(RunStatus), default=RunStatus.QUEUED)
    device: Mapped[str | None] = mapped_column(String(32))
    done: Mapped[int] = mapped_column(default=0)
    total: Mapped[int | None] = mapped_column()
    progress_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    log_tail: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str] = mapped_column(Text, default="")
    cancel_requested: Mapped[bool] = mapped_column(default=False)
    submission_id: Mapped[int | None] = mapped_column(ForeignKey("submissions.id", ondelete="SET NULL"))
