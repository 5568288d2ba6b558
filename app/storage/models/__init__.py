"""The models, importable from one place (with the enums of their columns); importing this module
registers every table."""

from app.storage.enums import (
    JobStatus,
    Participation,
    RunStatus,
    Selection,
    SubmissionStatus,
    TaskFileKind,
    Visibility,
)
from app.storage.models.accounts import ApiToken, LoginCounter, PasswordReset, Team, TeamMember, User
from app.storage.models.base import Base
from app.storage.models.baselines import BaselineRun
from app.storage.models.code import CodeRun
from app.storage.models.competitions import (
    Competition,
    CompetitionOrganizer,
    Participant,
    Phase,
    PhaseChange,
    PhaseFile,
    Task,
    TaskFile,
)
from app.storage.models.lease import LeasedRow
from app.storage.models.operations import BrokerMarker, IdempotencyKey, JobCounter
from app.storage.models.secrets import ServerSecret
from app.storage.models.submissions import Blob, DeletedSubmission, PhaseEntry, ProgramRun, Score, Submission
from app.storage.models.workers import PhaseQueue, WorkerCredential, WorkerQueue

__all__ = [
    "ApiToken",
    "Base",
    "BaselineRun",
    "Blob",
    "BrokerMarker",
    "CodeRun",
    "Competition",
    "CompetitionOrganizer",
    "DeletedSubmission",
    "IdempotencyKey",
    "JobCounter",
    "JobStatus",
    "LeasedRow",
    "LoginCounter",
    "Participant",
    "Participation",
    "PasswordReset",
    "Phase",
    "PhaseChange",
    "PhaseEntry",
    "PhaseFile",
    "PhaseQueue",
    "ProgramRun",
    "RunStatus",
    "Score",
    "Selection",
    "ServerSecret",
    "Submission",
    "SubmissionStatus",
    "Task",
    "TaskFile",
    "TaskFileKind",
    "Team",
    "TeamMember",
    "User",
    "Visibility",
    "WorkerCredential",
    "WorkerQueue",
]
