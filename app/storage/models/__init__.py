"""The models, importable from one place; importing this module registers every table."""

from app.storage.models.accounts import ApiToken, Team, TeamMember, User
from app.storage.models.base import Base
from app.storage.models.baselines import RUN_STATUSES, BaselineRun
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
from app.storage.models.submissions import STATUSES, Blob, PhaseEntry, Score, Submission

__all__ = [
    "PARTICIPATION",
    "RUN_STATUSES",
    "SELECTION",
    "STATUSES",
    "TASK_FILE_KINDS",
    "VISIBILITY",
    "ApiToken",
    "Base",
    "BaselineRun",
    "Blob",
    "Competition",
    "CompetitionOrganizer",
    "Participant",
    "Phase",
    "PhaseEntry",
    "PhaseFile",
    "Score",
    "Submission",
    "Task",
    "TaskFile",
    "Team",
    "TeamMember",
    "User",
]
