"""Hosted baselines: the registry, and runs shaped from a ``RunRecord``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.services.baselines.views import RunRecord
from app.storage.models import BaselineRun, RunStatus
from app.web.schemas.common import text_for


class BaselineOptionOut(BaseModel):
    name: str
    default: Any
    meaning: str


class BaselineOut(BaseModel):
    name: str
    version: str
    title: str
    description: str
    scorers: list[str] = Field(description="the scorers (task kinds) whose submission format the system writes")
    wants_gpu: bool
    options: list[BaselineOptionOut]
    available: bool | None = Field(
        description="whether this server can run the system (its modules installed); null where separate "
        "workers run the jobs, whose installation the server cannot see"
    )
    missing: list[str] = Field(description="the modules the system needs that are not installed here")
    install: str = Field(
        description="what to install for the system to run", examples=["pip install 'podium[baselines]'"]
    )


class BaselineList(BaseModel):
    baselines: list[BaselineOut]


BaselineName = text_for(BaselineRun.baseline)


class RunCreate(BaseModel):
    baseline: BaselineName = Field(
        description="the system's name (see GET /api/v1/baselines)", examples=["svident-tfidf-lr"]
    )
    options: dict[str, Any] = Field(default_factory=dict, description="option values; the others keep their defaults")


class ProgressOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    done: int
    total: int | None = Field(description="units of work of the attempt; unknown until the system announces them")
    fraction: float | None
    rate: float | None = Field(description="units per second so far")
    eta_seconds: float | None = Field(description="time left at that rate, from the last report (running runs)")
    updated_at: datetime | None


class RunOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    competition: str
    task: str
    phase: str
    baseline: BaselineName = Field(description="the system's name")
    version: str = Field(description="the version of the system the run was started for")
    title: str
    options: dict[str, Any] = Field(description="the options it runs with, defaults filled in")
    status: RunStatus = Field(description="queued, running, succeeded, failed or cancelled")
    requested_by: str | None = Field(description="the organizer who started it")
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int = Field(description="how many times a worker started it (a worker that died leaves it to another)")
    worker: str | None = Field(description="the worker that holds it, or held it last")
    device: str | None = Field(description="where the system computes: cpu, or the GPU it uses")
    progress: ProgressOut
    log_tail: str = Field(description="the last lines of the system's log")
    error: str = Field(description="why the run failed")
    cancel_requested: bool
    submission_id: int | None = Field(description="the baseline submission a successful run produced")

    @classmethod
    def of(cls, record: RunRecord) -> RunOut:
        return cls.model_validate(record, from_attributes=True)


class RunList(BaseModel):
    runs: list[RunOut]

    @classmethod
    def of(cls, records: list[RunRecord]) -> RunList:
        return cls(runs=[RunOut.of(record) for record in records])
