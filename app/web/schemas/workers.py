"""A competition's own queues and their credentials (organizers), and the remote worker protocol's bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from app.services.workers.protocol import Assignment
from app.services.workers.queues import CredentialView, Issued, QueueView
from app.storage.models import WorkerCredential
from app.web.schemas.common import text_for

#: A queue's name as organizers give it (and name it again when they route a phase to it).
QueueName = Annotated[
    str,
    Field(
        max_length=64,
        pattern=r"^[a-z0-9][a-z0-9_-]*$",
        description="lowercase letters, digits, '-' or '_', starting with a letter or digit; unique in the competition",
    ),
]


class QueueCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: QueueName


class CredentialCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: text_for(WorkerCredential.label) = ""  # type: ignore[valid-type]


class PhaseQueueSet(BaseModel):
    model_config = ConfigDict(extra="forbid")
    queue: QueueName | None = Field(description="a queue of the competition, or null: the platform's gpu queue")


class PhaseQueueOut(BaseModel):
    queue: str | None


class CredentialOut(BaseModel):
    id: int
    label: str
    created_at: datetime
    revoked_at: datetime | None
    last_contact_at: datetime | None = Field(description="when a worker holding it last called")
    live: bool = Field(description="a worker holding it called within the last two minutes")
    running: list[int] = Field(description="the code runs a worker holding it runs now")

    @classmethod
    def of(cls, view: CredentialView) -> CredentialOut:
        return cls(
            id=view.id,
            label=view.label,
            created_at=view.created_at,
            revoked_at=view.revoked_at,
            last_contact_at=view.last_contact_at,
            live=view.live,
            running=list(view.running),
        )


class IssuedOut(BaseModel):
    id: int
    label: str
    credential: str = Field(description="the worker's secret: shown this once, never again")

    @classmethod
    def of(cls, issued: Issued) -> IssuedOut:
        return cls(id=issued.credential.id, label=issued.credential.label, credential=issued.secret)


class QueueOut(BaseModel):
    name: str
    competition: str
    phases: list[str] = Field(description="the phases (task/phase) whose code runs go to this queue")
    credentials: list[CredentialOut]
    live: bool = Field(description="some worker of the queue called within the last two minutes")
    waiting: int = Field(description="code runs waiting for a worker of this queue")
    oldest_waiting_since: datetime | None

    @classmethod
    def of(cls, view: QueueView) -> QueueOut:
        return cls(
            name=view.name,
            competition=view.competition,
            phases=list(view.phases),
            credentials=[CredentialOut.of(c) for c in view.credentials],
            live=view.live,
            waiting=view.waiting,
            oldest_waiting_since=view.oldest_waiting_since,
        )


class QueueList(BaseModel):
    queues: list[QueueOut]


class LeaseIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    lease: str = Field(max_length=200)


class AssignmentOut(BaseModel):
    run_id: int
    lease: str
    lease_seconds: int
    code: dict[str, Any]
    program_url: str
    inputs_url: str

    @classmethod
    def of(cls, assignment: Assignment, files: str) -> AssignmentOut:
        return cls(
            run_id=assignment.run_id,
            lease=assignment.lease,
            lease_seconds=assignment.lease_seconds,
            code=assignment.code,
            program_url=f"{files}/{assignment.program}",
            inputs_url=f"{files}/{assignment.inputs}",
        )


class ClaimOut(BaseModel):
    run: AssignmentOut | None


class ReportIn(BaseModel):
    """How the program ran on the worker (``protocol.Report``)."""

    model_config = ConfigDict(extra="forbid")
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    output_exceeded: bool = False
    out_of_memory: bool = False
    wall_seconds: float = Field(0.0, ge=0)
    peak_memory_bytes: int | None = Field(None, ge=0)
    stdout_bytes: int = Field(0, ge=0)
    stderr_bytes: int = Field(0, ge=0)
    failure: str | None = Field(None, max_length=1000)
    platform_problem: str | None = Field(None, max_length=1000)
    cannot_run: str | None = Field(None, max_length=1000)
    device: str | None = Field(None, max_length=40, description="the GPU it ran on; null: the CPU")


class ClaimIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    gpus: int = Field(0, ge=0, le=1024, description="how many GPUs the worker has (0: runs needing one are left)")


class ResultOut(BaseModel):
    run_id: int
    status: str
