"""Files and results: blobs, submissions, their immutable scores, and the per-team quota lock."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    event,
)
from sqlalchemy.orm import Mapped, deferred, mapped_column

from app.storage.enums import StoreName, SubmissionStatus
from app.storage.models.base import Base
from app.storage.models.lease import LeasedRow
from app.storage.types import EnumText, UTCDateTime, one_of, utcnow


class Blob(Base):
    """A file, one row per sha256: its size, and the store that keeps its contents (``app.storage.stores``),
    which every worker reads; ``data`` holds them where that store is the database (``db``)."""

    __tablename__ = "blobs"
    __table_args__ = (CheckConstraint(one_of("store", StoreName), name="store"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    size: Mapped[int] = mapped_column(BigInteger)
    store: Mapped[StoreName] = mapped_column(EnumText(StoreName), default=StoreName.DB, server_default="db")
    data: Mapped[bytes | None] = deferred(mapped_column(LargeBinary, nullable=True))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class PhaseEntry(Base):
    """A team's entry in a phase. Its row is the lock that serializes the team's uploads, so that
    two uploads racing for the last slot of a quota are counted one after the other."""

    __tablename__ = "phase_entries"
    __table_args__ = (UniqueConstraint("phase_id", "team_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class DeletedSubmission(Base):
    """What stays of a submission its team deleted: when it was sent, so that it still counts against the phase's
    daily and total limits (deleting must not give a team more tries at the hidden test set)."""

    __tablename__ = "deleted_submissions"

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), index=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    submission_id: Mapped[int] = mapped_column()
    #: When the deleted submission was sent (its day is the day it counts in).
    submitted_at: Mapped[datetime] = mapped_column(UTCDateTime)
    deleted_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Submission(LeasedRow, Base):
    """An uploaded file and its way through scoring.

    ``scoring_round`` counts scoring requests (1 at upload, +1 per rescore); the score of the
    highest round written is the current one. A job claims the row (``running``, ``attempts`` + 1,
    a lease); a lease that expires without a heartbeat means the worker died and the job is resumed.
    A failure the platform caused sets ``quota_refunded``, so the upload stops counting against limits.
    Baseline runs are submissions of the competition itself (no team), flagged ``is_baseline``.
    """

    __tablename__ = "submissions"
    __table_args__ = (
        CheckConstraint(one_of("status", SubmissionStatus), name="status"),
        CheckConstraint("is_baseline OR team_id IS NOT NULL", name="team_or_baseline"),
        Index(None, "phase_id", "team_id", "created_at"),
        Index(None, "status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    team_id: Mapped[int | None] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    sha256: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(BigInteger)
    original_name: Mapped[str] = mapped_column(String(255))
    method_name: Mapped[str] = mapped_column(String(200), default="")
    method_description: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[SubmissionStatus] = mapped_column(EnumText(SubmissionStatus), default=SubmissionStatus.QUEUED)
    scoring_round: Mapped[int] = mapped_column(default=1)
    participant_message: Mapped[str] = mapped_column(Text, default="")
    organizer_message: Mapped[str] = mapped_column(Text, default="")
    quota_refunded: Mapped[bool] = mapped_column(default=False)
    is_baseline: Mapped[bool] = mapped_column(default=False)
    baseline_name: Mapped[str | None] = mapped_column(String(200))
    baseline_version: Mapped[str | None] = mapped_column(String(64))
    chosen: Mapped[bool] = mapped_column(default=False)


class Score(Base):
    """One scoring round's result; never updated. A second worker finishing the same round hits the
    unique constraint and changes nothing."""

    __tablename__ = "scores"
    __table_args__ = (UniqueConstraint("submission_id", "round"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    round: Mapped[int]
    scorer: Mapped[str] = mapped_column(String(64))
    scorer_version: Mapped[str] = mapped_column(String(32))
    metrics: Mapped[dict[str, float]] = mapped_column(JSON)
    breakdown: Mapped[dict[str, Any]] = deferred(mapped_column(JSON, nullable=False))
    #: Per-unit statistics of the report (see ``scorers.base.ScoreReport``), for bootstrap intervals.
    units: Mapped[dict[str, Any]] = deferred(mapped_column(JSON, nullable=False))
    #: The primary metric's bootstrap interval, computed when the score was recorded
    #: (``leaderboard.uncertainty.interval_record``); null for scores recorded before intervals were.
    interval: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    #: In a phase with a private split (``scorers.split``) the columns above hold the public units' report, all
    #: that participants see before the reveal; these hold the private board's metrics (its private units, or all
    #: units, as the phase says) and the private units' statistics. Null in a phase without a split.
    private_metrics: Mapped[dict[str, float] | None] = mapped_column(JSON)
    private_units: Mapped[dict[str, Any] | None] = deferred(mapped_column(JSON))
    #: The private board's breakdown columns (the scorer's ``leaderboard_breakdowns``, on the private board's units):
    #: ``{dimension: {key: {metric: value}}}``; null without a split, and for scores recorded before they were kept.
    private_columns: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


@event.listens_for(Score, "before_update")
def _scores_are_immutable(mapper: Any, connection: Any, target: Score) -> None:
    raise ValueError(f"score {target.id} is immutable; rescoring adds a new round")


class ProgramRun(Base):
    """How a scoring program ran on one scoring round of a submission: for organizers, never the team.

    ``stdout`` and ``stderr`` hold the ends of the logs (``*_bytes`` their whole sizes); ``detailed_html``
    is the program's ``detailed_results.html``, sanitized. One row per round: like a score, a second
    worker finishing the same round writes nothing.
    """

    __tablename__ = "program_runs"
    __table_args__ = (UniqueConstraint("submission_id", "round"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    round: Mapped[int]
    exit_code: Mapped[int | None]
    signal: Mapped[int | None]
    timed_out: Mapped[bool] = mapped_column(default=False)
    output_exceeded: Mapped[bool] = mapped_column(default=False)
    wall_seconds: Mapped[float] = mapped_column(default=0.0)
    #: How the run ended, in a plain sentence (or why it could not start).
    outcome: Mapped[str] = mapped_column(Text, default="")
    stdout: Mapped[str] = deferred(mapped_column(Text, default="", nullable=False))
    stderr: Mapped[str] = deferred(mapped_column(Text, default="", nullable=False))
    stdout_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    stderr_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    detailed_html: Mapped[str | None] = deferred(mapped_column(Text))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
