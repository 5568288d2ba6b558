"""What organizers put online: competitions, their tasks and phases, and the files they offer."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, BigInteger, CheckConstraint, Float, ForeignKey, String, Text, UniqueConstraint, false, true
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.storage.enums import Participation, Selection, TaskFileKind, Visibility
from app.storage.models.base import Base
from app.storage.types import EnumText, UTCDateTime, one_of, utcnow

if TYPE_CHECKING:
    from app.storage.models.accounts import User


class Competition(Base):
    """A competition: one or more tasks under one title, run by its organizers."""

    __tablename__ = "competitions"
    __table_args__ = (CheckConstraint(one_of("participation", Participation), name="participation"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    participation: Mapped[Participation] = mapped_column(EnumText(Participation), default=Participation.OPEN)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: Most bytes every team's submissions together, and each team's, may take (null: the operator's default,
    #: ``PODIUM_STORAGE_QUOTA_BYTES`` and ``PODIUM_TEAM_STORAGE_QUOTA_BYTES``); ``services.submissions.storage_quota``.
    storage_quota_bytes: Mapped[int | None] = mapped_column(BigInteger)
    team_storage_quota_bytes: Mapped[int | None] = mapped_column(BigInteger)

    tasks: Mapped[list[Task]] = relationship(order_by="Task.position", back_populates="competition")


class CompetitionOrganizer(Base):
    """A user who runs a competition: sees hidden results and every submission, rescores, reveals."""

    __tablename__ = "competition_organizers"

    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)


class Participant(Base):
    """A user's request to take part in an ``approval`` competition; ``approved_at`` once accepted,
    ``refused_at`` once an organizer said no or removed them (they may not take part, even in an
    ``open`` competition, until an organizer approves them)."""

    __tablename__ = "participants"

    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    approved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    refused_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Task(Base):
    """One evaluation task of a competition: a scorer with its options, and its phases."""

    __tablename__ = "tasks"
    __table_args__ = (UniqueConstraint("competition_id", "slug"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"))
    slug: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    scorer: Mapped[str] = mapped_column(String(64))
    scorer_options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    position: Mapped[int] = mapped_column(default=0)

    competition: Mapped[Competition] = relationship(back_populates="tasks")
    phases: Mapped[list[Phase]] = relationship(order_by="Phase.position", back_populates="task")
    files: Mapped[list[TaskFile]] = relationship(order_by="TaskFile.position")


class TaskFile(Base):
    """A file of a task: ``training`` data anyone may download, or a ``resource`` for baselines only."""

    __tablename__ = "task_files"
    __table_args__ = (
        UniqueConstraint("task_id", "kind", "name"),
        CheckConstraint(one_of("kind", TaskFileKind), name="kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    kind: Mapped[TaskFileKind] = mapped_column(EnumText(TaskFileKind))
    name: Mapped[str] = mapped_column(String(255))
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    position: Mapped[int] = mapped_column(default=0)


class Phase(Base):
    """A period of a task with its own gold, public inputs, limits and leaderboard.

    Times are UTC instants; ``None`` leaves that side open. A ``hidden`` phase shows metrics only to
    organizers until ``revealed_at`` is set.
    """

    __tablename__ = "phases"
    __table_args__ = (
        UniqueConstraint("task_id", "slug"),
        CheckConstraint(one_of("visibility", Visibility), name="visibility"),
        CheckConstraint(one_of("selection", Selection), name="selection"),
        CheckConstraint("private_share IS NULL OR (private_share > 0 AND private_share < 1)", name="private_share"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    slug: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    starts_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    ends_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    gold_blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    daily_limit: Mapped[int | None]
    total_limit: Mapped[int | None]
    visibility: Mapped[Visibility] = mapped_column(EnumText(Visibility), default=Visibility.PUBLIC)
    revealed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    selection: Mapped[Selection] = mapped_column(EnumText(Selection), default=Selection.BEST)
    max_upload_bytes: Mapped[int | None]
    position: Mapped[int] = mapped_column(default=0)
    #: The gold's ids were replaced by opaque ones when the phase was created (the release's ids told the
    #: answers): its gold, inputs and every message carry only those (``services.competitions.opaque_ids``).
    opaque_ids: Mapped[bool] = mapped_column(default=False, server_default=false())
    #: The board shows confidence intervals and neighbour comparisons (``intervals: false`` in the bundle
    #: turns both off).
    intervals: Mapped[bool] = mapped_column(default=True, server_default=true())
    #: What the public board shows of each team: ``plain`` (its submissions' scores) or ``ladder`` (a new score only
    #: when a submission beats the last shown one by the paired standard error: ``app.services.boards.ladder``).
    board: Mapped[str] = mapped_column(String(16), default="plain", server_default="plain")
    #: Further boards of the phase (``boards`` in the bundle): ``leaderboard.multi.BoardSpec.to_dict`` each; None: none.
    boards: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    #: Scoring programs (the ``program`` scorer): the wall time one run may take, in seconds (None: 10 minutes),
    #: and whether a team reads the end of the program's stderr when its submission failed.
    execution_time_limit: Mapped[int | None]
    show_program_stderr: Mapped[bool] = mapped_column(default=False, server_default=false())
    #: The imported phase had an ingestion program, which runs its code submissions (``code``, ``ingestion``).
    ingestion_program: Mapped[bool] = mapped_column(default=False, server_default=false())
    #: A code phase (``code:`` in the bundle) takes programs, run on its hidden inputs: how to run them
    #: (``app.services.code.settings.CodeSettings`` as a mapping), and the inputs, one zip, mounted at /input.
    code: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    code_inputs_blob_id: Mapped[int | None] = mapped_column(ForeignKey("blobs.id"))
    #: A private test split (``private_share`` in the bundle): the share of the scoring units kept private, the
    #: secret their ids are hashed with (``scorers.split``; made at import, never shown to participants) and what
    #: the board ranks by once the phase is revealed (``private``: the private units, ``all``: every unit).
    private_share: Mapped[float | None] = mapped_column(Float)
    split_secret: Mapped[str | None] = mapped_column(String(64))
    private_board: Mapped[str] = mapped_column(String(16), default="private", server_default="private")
    #: Each team marks up to this many submissions as final; after the reveal the best of them on the private board
    #: counts (``app.services.boards.private``). None: the public board's choice counts.
    final_submissions: Mapped[int | None]
    #: After this instant the public board stops changing until the reveal: later submissions are scored and shown
    #: to their teams only. None: never frozen.
    frozen_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    task: Mapped[Task] = relationship(back_populates="phases")
    files: Mapped[list[PhaseFile]] = relationship(order_by="PhaseFile.position")

    @property
    def metrics_public(self) -> bool:
        """Whether anyone, not only organizers, may see this phase's numbers."""
        return self.visibility == Visibility.PUBLIC or self.revealed_at is not None


class PhaseFile(Base):
    """A public input file of a phase (what participants run their systems on); never the gold."""

    __tablename__ = "phase_files"
    __table_args__ = (UniqueConstraint("phase_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    position: Mapped[int] = mapped_column(default=0)


class PhaseChange(Base):
    """One organizer's change of one setting of a phase (its window, limits, visibility, description):
    who, when, and the value before and after, as text (``None`` where the setting was unset)."""

    __tablename__ = "phase_changes"

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    field: Mapped[str] = mapped_column(String(32))
    old_value: Mapped[str | None] = mapped_column(Text)
    new_value: Mapped[str | None] = mapped_column(Text)

    user: Mapped[User | None] = relationship()
