"""Submissions as the API shows them, shaped from a ``SubmissionRecord``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.services.submissions.limits import MAX_METHOD_DESCRIPTION, MAX_METHOD_NAME
from app.services.submissions.quota import QuotaUsage
from app.services.submissions.results import OrganizerNotes, ScorerVersion, SubmissionRecord
from app.storage.models import RunStatus, SubmissionStatus
from app.web.schemas.boards import IntervalOut


class QuotaOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    daily_limit: int | None
    daily_used: int
    total_limit: int | None
    total_used: int
    resets_at: datetime

    @classmethod
    def of(cls, usage: QuotaUsage) -> QuotaOut:
        return cls.model_validate(usage, from_attributes=True)


class CodeRunOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    stage: str
    status: RunStatus
    outcome: str = Field(description="how the run ended, in plain words")
    exit_code: int | None
    timed_out: bool
    out_of_memory: bool
    wall_seconds: float | None
    peak_memory_bytes: int | None = Field(description="the most memory its processes held together")
    logs_shown: bool
    stdout: str | None = Field(description="the end of the program's stdout, where the viewer may read it")
    stderr: str | None
    waiting_for: str | None = Field(
        None,
        description="while queued: the worker it waits for (a GPU worker, a worker that can run code); "
        "organizers also read why, after a colon",
    )
    device: str | None = Field(None, description="the GPU it ran on (null: the CPU, or it has not run)")
    stdout_bytes: int | None = Field(
        None, description="how much the program wrote to stdout (only its end is kept), where the logs are shown"
    )
    stderr_bytes: int | None = None


class SubmissionOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    competition: str
    task: str
    phase: str
    team: str | None = Field(description="the team's name; for a baseline, the system's")
    baseline: bool = Field(description="true for the output of a hosted baseline run")
    submitted_at: datetime
    original_name: str = Field(description="the uploaded file's name")
    size: int = Field(description="the uploaded file's size in bytes")
    sha256: str = Field(description="the uploaded file's SHA-256, in hex")
    method_name: str
    method_description: str
    status: SubmissionStatus = Field(
        description="queued, running, scored or failed; awaiting_run while a code phase's program has not run yet"
    )
    message: str = Field(description="for the team: why a submission failed, in plain words")
    chosen: bool
    scored_at: datetime | None
    metrics_hidden: bool = Field(description="true when scored but the phase's numbers are not public yet")
    metrics: dict[str, float] | None
    scorer: ScorerVersion | None
    interval: IntervalOut | None = Field(
        None, description="the primary metric's 95% interval, where the metrics are visible (null if none was stored)"
    )
    queue_position: int | None = Field(
        None,
        description="while queued: its place in the scoring queue, in the order workers take them "
        "(competitions take turns, then teams; 1: next); awaiting_run: its program's place in the queue of "
        "runs, in the same order; else null",
    )
    estimated_scored_at: datetime | None = Field(
        None, description="while queued: when it will probably be scored, from the recent pace (null: no pace yet)"
    )
    breakdown: dict[str, Any] | None = None
    organizer: OrganizerNotes | None = Field(
        None, description="for organizers only: the platform's error and the attempts"
    )
    quota: QuotaOut | None = None
    private_metrics: dict[str, float] | None = Field(
        None,
        description="in a phase with a private split: the private board's metrics (metrics are the public units'); "
        "for organizers at any time, for the team once the phase is revealed; else null",
    )
    private_board: Literal["private", "all"] | None = Field(
        None, description="which units private_metrics are computed on: the private units, or all units"
    )
    code_run: CodeRunOut | None = Field(
        None,
        description="on a code phase: how the program ran (stage: queued, running, scoring, scored or failed); "
        "its stdout and stderr only where the phase shows logs, and to organizers",
    )

    @classmethod
    def of(cls, record: SubmissionRecord, *, quota: QuotaUsage | None = None) -> SubmissionOut:
        """The record as the API shows it; an upload's answer also says how much of the quota is used."""
        out = cls.model_validate(record, from_attributes=True)
        if quota is not None:
            out.quota = QuotaOut.of(quota)
        return out


class SubmissionList(BaseModel):
    submissions: list[SubmissionOut]

    @classmethod
    def of(cls, records: list[SubmissionRecord]) -> SubmissionList:
        return cls(submissions=[SubmissionOut.of(record) for record in records])


class RescoreOut(BaseModel):
    queued: int


class DirectUploadIn(BaseModel):
    """A file about to be sent straight to object storage: what it is, before any byte of it."""

    size: int = Field(gt=0, description="The file's size in bytes.")
    sha256: str = Field(
        min_length=64, max_length=64, pattern=r"^[0-9a-f]{64}$", description="The file's sha256, lowercase hexadecimal."
    )
    filename: str = Field(max_length=255, pattern=r"^[^\x00]*$")
    method_name: str = Field(default="", max_length=MAX_METHOD_NAME, pattern=r"^[^\x00]*$")
    method_description: str = Field(default="", max_length=MAX_METHOD_DESCRIPTION, pattern=r"^[^\x00]*$")


class DirectUploadOut(BaseModel):
    upload: str = Field(description="The token that completes the upload.")
    part_size: int = Field(description="Bytes of every part but the last.")
    parts: list[str] = Field(description="Part n (from 1) is sent with PUT to the n-th link; keep each ETag.")
    expires_at: datetime
    complete_url: str


class DirectCompleteIn(BaseModel):
    upload: str = Field(max_length=4096, pattern=r"^[^\x00]*$")
    etags: list[str] = Field(max_length=10_000, description="The ETag each part's PUT answered, in part order.")
