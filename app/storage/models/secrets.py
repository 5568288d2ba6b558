"""Secrets the server makes for itself and keeps in its database, so that every process of one Podium
uses the same ones without any setting."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from app.storage.models.base import Base
from app.storage.types import UTCDateTime, utcnow


class ServerSecret(Base):
    """A random key, made once (the first time it is needed) and never changed: what is derived from it
    (opaque ids) must come out the same in every process and after every restart."""

    __tablename__ = "server_secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
