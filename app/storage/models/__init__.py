"""The models, importable from one place; importing this module registers every table."""

from app.storage.models.accounts import ApiToken, Team, TeamMember, User
from app.storage.models.base import Base
from app.storage.models.baselines import BaselineRun, RunStatus
from app.storage.models.competitions import (
    PARTICIPATION,
    SELECTION,
    TASK_FILE_KINDS,
    VISIBILITY,
    Competition,
    CompetitionOrganizer,
    Participant,
    Phase,
    PhaseFile,
    Task,
    TaskFile,
)
from app.storage.models.lease import JobStatus, LeasedRow
from app.storage.models.submissions import Blob, PhaseEntry, Score, Submission, SubmissionStatus

__all__ = [
    "PARTICIPATION",
    "SELECTION",
    "TASK_FILE_KINDS",
    "VISIBILITY",
    "ApiToken",
    "Base",
    "BaselineRun",
    "Blob",
    "Competition",
    "CompetitionOrganizer",
    "JobStatus",
    "LeasedRow",
    "Participant",
    "Phase",
    "PhaseEntry",
    "PhaseFile",
    "RunStatus",
    "Score",
    "Submission",
    "SubmissionStatus",
    "Task",
    "TaskFile",
    "Team",
    "TeamMember",
    "User",
]
