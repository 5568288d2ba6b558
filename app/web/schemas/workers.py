"""A competition's own queues and their credentials (organizers), and the remote worker protocol's bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from app.services.workers.protocol import Assignment
from app.services.workers.queues import CredentialView, Issued, QueueView
from app.services.workers.scoring import ScoringAssignment
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
    scoring: bool = Field(
        False,
        description="a phase scored by a program sends its scoring to the queue too (its workers receive the "
        "phase's gold for the submissions they score); false: scoring stays on the platform",
    )


class PhaseQueueOut(BaseModel):
    queue: str | None
    scoring: bool = Field(False, description="the phase's program scoring goes to the queue too")


class CredentialOut(BaseModel):
    id: int
    label: str
    created_at: datetime
    revoked_at: datetime | None
    last_contact_at: datetime | None = Field(description="when a worker holding it last called")
    live: bool = Field(description="a worker holding it called within the last two minutes")
    running: list[int] = Field(description="the code runs a worker holding it runs now")
    scoring: list[int] = Field(default_factory=list, description="the submissions a worker holding it scores now")

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
            scoring=list(view.scoring),
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
    scoring_phases: list[str] = Field(
        default_factory=list, description="the phases (of phases) whose program scoring goes to this queue too"
    )
    credentials: list[CredentialOut]
    live: bool = Field(description="some worker of the queue called within the last two minutes")
    waiting: int = Field(description="code runs and scorings waiting for a worker of this queue")
    oldest_waiting_since: datetime | None

    @classmethod
    def of(cls, view: QueueView) -> QueueOut:
        return cls(
            name=view.name,
            competition=view.competition,
            phases=list(view.phases),
            scoring_phases=list(view.scoring_phases),
            credentials=[CredentialOut.of(c) for c in view.credentials],
            live=view.live,
            waiting=view.waiting,
            oldest_waiting_since=view.oldest_waiting_since,
        )


class QueueDeleted(BaseModel):
    deleted: str
    phases: list[str] = Field(description="the phases (task/phase) moved back to the platform's queues")


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


class ScoringAssignmentOut(BaseModel):
    """A submission to score with the phase's scoring program (``workers.scoring``)."""

    submission_id: int
    lease: str
    lease_seconds: int
    scorer_options: dict[str, Any] = Field(description="the program scorer's options (columns, image, result files)")
    time_limit: int = Field(description="seconds the program may run")
    submission_url: str
    gold_url: str = Field(description="the phase's scoring program and reference data")

    @classmethod
    def of(cls, assignment: ScoringAssignment, files: str) -> ScoringAssignmentOut:
        return cls(
            submission_id=assignment.submission_id,
            lease=assignment.lease,
            lease_seconds=assignment.lease_seconds,
            scorer_options=assignment.scorer_options,
            time_limit=assignment.time_limit,
            submission_url=f"{files}/{assignment.submission}",
            gold_url=f"{files}/{assignment.gold}",
        )


class ClaimOut(BaseModel):
    run: AssignmentOut | None
    scoring: ScoringAssignmentOut | None = None


class ProcessFactsIn(BaseModel):
    """How a program ran in the worker's sandbox (``report.ProcessFacts``), in both reports."""

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


class ReportIn(ProcessFactsIn):
    """How the program ran on the worker (``protocol.Report``)."""

    model_config = ConfigDict(extra="forbid")
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


class ScoringReportIn(ProcessFactsIn):
    """What a phase's scoring program gave on the worker (``report.ScoringReport``)."""

    model_config = ConfigDict(extra="forbid")
    scores: dict[Annotated[str, Field(max_length=100)], float] = Field(default_factory=dict, max_length=200)
    ignored: dict[Annotated[str, Field(max_length=100)], Annotated[str, Field(max_length=200)]] = Field(
        default_factory=dict, max_length=200
    )
    failure: str | None = Field(None, max_length=1000)
    detail: str | None = Field(None, max_length=20_000)
    ran: bool = True
    problem: str | None = Field(None, max_length=1000)
    cannot_run: str | None = Field(None, max_length=1000)


class ScoringResultOut(BaseModel):
    submission_id: int
    status: str


class OwnWorkersOut(BaseModel):
    """A phase served by its competition's own queue when no worker of that queue called lately."""

    queue: str
    live: bool = Field(description="false: no worker of the queue called within the last two minutes")
    waiting: int = Field(description="runs and scorings of the queue that wait for one of its workers")
    oldest_waiting_since: datetime | None
    waited_seconds: int | None = Field(description="how long the oldest of them has waited")
    message: str

    @classmethod
    def of(cls, view: QueueView, now: datetime) -> OwnWorkersOut:
        waited = None if view.oldest_waiting_since is None else int((now - view.oldest_waiting_since).total_seconds())
        return cls(
            queue=view.name,
            live=view.live,
            waiting=view.waiting,
            oldest_waiting_since=view.oldest_waiting_since,
            waited_seconds=waited,
            message=unserved_sentence(view, now),
        )


def unserved_sentence(view: QueueView, now: datetime) -> str:
    """What a phase's pages and its API answer say when no worker of its queue is live."""
    sentence = (
        "This phase's runs go to the organizers' own workers, and none of them has called in for more than two minutes"
    )
    if not view.waiting or view.oldest_waiting_since is None:
        return sentence + ": what is sent now waits until one does."
    minutes = int((now - view.oldest_waiting_since).total_seconds() // 60)
    runs = "1 run waits" if view.waiting == 1 else f"{view.waiting} runs wait"
    return f"{sentence}: {runs}, the oldest for {minutes} minute{'' if minutes == 1 else 's'}."
