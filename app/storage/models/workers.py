"""Compute workers that organizers bring: a competition's own queue, its workers' credentials, and which of its
phases send their code runs there.

A ``WorkerQueue`` belongs to one competition. A ``WorkerCredential`` lets one remote worker serve that queue over
the API (``app.services.workers``); only the SHA-256 of its secret is stored (256 random bits, like the API
tokens), it is shown once, and ``revoked_at`` ends it. ``last_contact_at`` is when a worker holding it last
called. A ``PhaseQueue`` row sends the phase's code runs to the queue (without one they run on the platform's
``gpu`` queue) and, where ``scoring`` is set, its scoring program too (without: the platform's ``scoring`` queue).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, String, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from app.storage.models.base import Base
from app.storage.types import UTCDateTime, utcnow


class WorkerQueue(Base):
    """A queue of one competition, served by the organizers' own workers."""

    __tablename__ = "worker_queues"
    __table_args__ = (UniqueConstraint("competition_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WorkerCredential(Base):
    """What one remote worker presents (``Authorization: Bearer pwk_...``); only its SHA-256 is stored."""

    __tablename__ = "worker_credentials"

    id: Mapped[int] = mapped_column(primary_key=True)
    queue_id: Mapped[int] = mapped_column(ForeignKey("worker_queues.id", ondelete="CASCADE"), index=True)
    label: Mapped[str] = mapped_column(String(100), default="")
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_contact_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class PhaseQueue(Base):
    """The phase's code runs go to this queue (no row: the platform's ``gpu`` queue), and its program scoring where
    ``scoring`` is set (a phase scored by the ``program`` scorer; its workers then receive the phase's gold)."""

    __tablename__ = "phase_queues"

    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), primary_key=True)
    queue_id: Mapped[int] = mapped_column(ForeignKey("worker_queues.id", ondelete="CASCADE"), index=True)
    scoring: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
