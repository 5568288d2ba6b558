"""What Podium keeps about its own operation, beside the jobs' rows.

* ``JobCounter``: how often something happened to jobs, summed over every process (jobs resumed
  after their worker died, jobs sent again, broker losses noticed). ``/metrics`` reads them, so
  every web process reports the same numbers.
* ``BrokerMarker``: the token the sweepers keep in the broker, one per Podium instance on it
  (``queue_prefix``). A broker that comes back without the token lost what it held.
* ``IdempotencyKey``: an upload's ``Idempotency-Key``, so that the same key from the same user
  within a day returns the submission it made instead of making a second one.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.storage.models.base import Base
from app.storage.types import UTCDateTime, utcnow


class JobCounter(Base):
    """One counter: ``name`` (``resumed``, ``resent``, ``broker_losses``) for a kind of job (``""``
    when the event has no kind)."""

    __tablename__ = "job_counters"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(64), primary_key=True, default="")
    value: Mapped[int] = mapped_column(BigInteger, default=0)


class BrokerMarker(Base):
    """The token last put in the broker under the name ``name`` (the instance's queue prefix)."""

    __tablename__ = "broker_markers"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    token: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class IdempotencyKey(Base):
    """A key a user sent with an upload, the file it came with and the submission it made."""

    __tablename__ = "idempotency_keys"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    sha256: Mapped[str] = mapped_column(String(64))
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
