"""The fixed sets of values that columns hold, as ``StrEnum``s (stored as their text, see
``app.storage.types.EnumText``; each table checks its values with a constraint).

No SQLAlchemy here, so that a client of the API (``podium submit``) may compare what it reads with
these names without loading the database layer.
"""

from __future__ import annotations

from enum import StrEnum


class JobStatus(StrEnum):
    """The two statuses every job row shares: waiting for a worker, and held by one."""

    QUEUED = "queued"
    RUNNING = "running"


class SubmissionStatus(StrEnum):
    """Where a submission is on its way: waiting, being scored, scored, or failed by the platform. A program
    uploaded to a code phase ``awaits_run`` until its run (``CodeRun``) made the predictions that are scored."""

    QUEUED = JobStatus.QUEUED.value
    RUNNING = JobStatus.RUNNING.value
    SCORED = "scored"
    FAILED = "failed"
    AWAITING_RUN = "awaiting_run"


class RunStatus(StrEnum):
    """Where a baseline run is: waiting, running, or ended one of three ways."""

    QUEUED = JobStatus.QUEUED.value
    RUNNING = JobStatus.RUNNING.value
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def active(self) -> bool:
        """Whether the run has not ended yet."""
        return self in (RunStatus.QUEUED, RunStatus.RUNNING)


class Participation(StrEnum):
    """Who may take part: anyone (``open``), or those an organizer approved (``approval``)."""

    OPEN = "open"
    APPROVAL = "approval"


class Visibility(StrEnum):
    """Whether a phase's numbers are public, or ``hidden`` (organizers only) until it is revealed."""

    PUBLIC = "public"
    HIDDEN = "hidden"


class Selection(StrEnum):
    """Which of a team's submissions its leaderboard entry shows (see ``leaderboard.ranking``)."""

    BEST = "best"
    LATEST = "latest"
    CHOSEN = "chosen"


class TaskFileKind(StrEnum):
    """A task's ``training`` files anyone may download, or its ``resource`` files for baselines only."""

    TRAINING = "training"
    RESOURCE = "resource"


class StoreName(StrEnum):
    """Where a blob's contents are kept (``blobs.store``): in its database row, in a folder on disk, or in an
    S3-compatible bucket (``app.storage.stores``)."""

    DB = "db"
    DISK = "disk"
    S3 = "s3"
