"""Code runs: a program uploaded to a code phase, run on the phase's hidden inputs before its output is scored.

A run is a job on the ``gpu`` queue (``app.services.code.job``) with the lease columns of every job row.
It keeps how the program ran (exit status, wall time, the most memory its processes held together, the
ends of stdout and stderr, the GPU it ran on) and, once it succeeded, the submission's blob is its predictions
while ``program_blob_id`` keeps the program the team uploaded. While it waits for a worker that can run it (one
with a GPU, one with a usable sandbox) ``waiting_for`` says which (``app.services.code.placement``).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, deferred, mapped_column

from app.storage.enums import RunStatus
from app.storage.models.base import Base
from app.storage.models.lease import LeasedRow
from app.storage.types import EnumText, one_of


class CodeRun(LeasedRow, Base):
    """One run of a submission's program on its phase's inputs (one per submission)."""

    __tablename__ = "code_runs"
    __table_args__ = (
        CheckConstraint(one_of("status", RunStatus), name="status"),
        Index(None, "status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"), unique=True)
    program_blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    status: Mapped[RunStatus] = mapped_column(EnumText(RunStatus), default=RunStatus.QUEUED)
    exit_code: Mapped[int | None]
    signal: Mapped[int | None]
    timed_out: Mapped[bool] = mapped_column(default=False)
    out_of_memory: Mapped[bool] = mapped_column(default=False)
    wall_seconds: Mapped[float | None]
    #: The most memory the run's processes held together (from its cgroup; null without one).
    peak_memory_bytes: Mapped[int | None] = mapped_column(BigInteger)
    #: How the run ended, in a plain sentence the team reads (never anything the program printed).
    outcome: Mapped[str] = mapped_column(Text, default="")
    #: The ends of the program's logs: organizers always read them, the team where the phase shows logs.
    stdout: Mapped[str] = deferred(mapped_column(Text, default="", nullable=False))
    stderr: Mapped[str] = deferred(mapped_column(Text, default="", nullable=False))
    stdout_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    stderr_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    #: While queued: the worker it waits for and why ("a GPU worker: ..."), set by a worker that could not run it.
    waiting_for: Mapped[str] = mapped_column(Text, default="")
    #: The GPU the program ran on ("GPU 0"; null: the CPU).
    device: Mapped[str | None] = mapped_column(String(40))
