"""Response and request bodies of the JSON API, as pydantic models (they make the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field

from app.services.boards.snapshot import BoardSnapshot
from leaderboard.ranking import Entry

#: Text a client sends: anything but NUL, which no text column holds (PostgreSQL refuses it).
Text = Annotated[str, Field(pattern=r"^[^\x00]*$")]


class Problem(BaseModel):
    where: str | None = None
    key: str | None = None
    message: str


class ErrorOut(BaseModel):
    """Every 4xx answer: a short code, a message for people, and for refused input the problems."""

    error: str = Field(examples=["quota_exhausted"])
    detail: str | None = None
    problems: list[Problem] | None = None
    total: int | None = None
    resets_at: datetime | None = None
    opens_at: datetime | None = None
    closed_at: datetime | None = None
    limit_bytes: int | None = None


class FileOut(BaseModel):
    name: str
    size: int
    sha256: str
    url: str


class PhaseOut(BaseModel):
    slug: str
    title: str
    description: str
    description_html: str
    starts_at: datetime | None
    ends_at: datetime | None
    state: str = Field(description="upcoming, open or closed")
    daily_limit: int | None
    total_limit: int | None
    visibility: str
    revealed: bool
    selection: str
    max_upload_bytes: int
    files: list[FileOut] = []
    leaderboard_url: str
    submissions_url: str


class TaskOut(BaseModel):
    slug: str
    title: str
    description: str
    description_html: str
    scorer: dict[str, Any]
    scorer_options: dict[str, Any]
    training_files: list[FileOut] = []
    phases: list[PhaseOut]


class CompetitionSummary(BaseModel):
    slug: str
    title: str
    participation: str
    created_at: datetime
    tasks: list[str]
    url: str


class CompetitionOut(BaseModel):
    slug: str
    title: str
    description: str
    description_html: str
    participation: str
    organizers: list[str]
    created_at: datetime
    tasks: list[TaskOut]


class CompetitionList(BaseModel):
    competitions: list[CompetitionSummary]


class CompetitionCreated(BaseModel):
    slug: str
    created: bool
    url: str


class ScorerRef(BaseModel):
    name: str
    version: str


class OrganizerView(BaseModel):
    message: str
    attempts: int
    scoring_round: int
    worker: str | None
    quota_refunded: bool
    score_round: int | None


class QuotaOut(BaseModel):
    daily_limit: int | None
    daily_used: int
    total_limit: int | None
    total_used: int
    resets_at: datetime


class SubmissionOut(BaseModel):
    id: int
    competition: str
    task: str
    phase: str
    team: str | None
    baseline: bool
    submitted_at: datetime
    original_name: str
    size: int
    sha256: str
    method_name: str
    method_description: str
    status: str = Field(description="queued, running, scored or failed")
    message: str = Field(description="for the team: why a submission failed, in plain words")
    chosen: bool
    scored_at: datetime | None
    metrics_hidden: bool = Field(description="true when scored but the phase's numbers are not public yet")
    metrics: dict[str, float] | None
    scorer: ScorerRef | None
    queue_position: int | None = Field(
        None, description="while queued: its place in the scoring queue (1: next), else null"
    )
    estimated_scored_at: datetime | None = Field(
        None, description="while queued: when it will probably be scored, from the recent pace (null: no pace yet)"
    )
    breakdown: dict[str, Any] | None = None
    organizer: OrganizerView | None = None
    quota: QuotaOut | None = None


class SubmissionList(BaseModel):
    submissions: list[SubmissionOut]


class RescoreOut(BaseModel):
    queued: int


class MetricOut(BaseModel):
    name: str
    meaning: str
    higher_is_better: bool


class EntryOut(BaseModel):
    rank: int
    team: str
    system: str
    metrics: dict[str, float]
    columns: dict[str, dict[str, dict[str, float]]]
    baseline: bool
    submitted_at: datetime
    submission_id: int
    scored_submissions: int

    @classmethod
    def of(cls, entry: Entry) -> EntryOut:
        c = entry.candidate
        return cls(
            rank=entry.rank,
            team=c.team,
            system=c.system,
            metrics=dict(c.metrics or {}),
            columns={dim: dict(rows) for dim, rows in c.columns.items()},
            baseline=c.baseline,
            submitted_at=c.submitted_at,
            submission_id=c.submission_id,
            scored_submissions=entry.scored_submissions,
        )


class LeaderboardOut(BaseModel):
    competition: str
    task: str
    phase: str
    scorer: str
    primary_metric: str
    metrics: list[MetricOut]
    selection: str
    hidden: bool = Field(description="true while the phase's numbers are for organizers only")
    entries: list[EntryOut]

    @classmethod
    def of(cls, snapshot: BoardSnapshot) -> LeaderboardOut:
        """The snapshot's ranking as the API answers it (entries only where its viewers may see numbers)."""
        facts, described = snapshot.facts, snapshot.description
        return cls(
            competition=facts.competition,
            task=facts.task,
            phase=facts.phase,
            scorer=described["name"],
            primary_metric=snapshot.rules.primary,
            metrics=[
                MetricOut(name=m["name"], meaning=m["meaning"], higher_is_better=m["higher_is_better"])
                for m in described["metrics"]
            ],
            selection=facts.selection,
            hidden=not facts.metrics_public,
            entries=[EntryOut.of(entry) for entry in snapshot.entries],
        )


class UserCreate(BaseModel):
    name: Text = Field(examples=["ada"])
    password: Text
    email: Text | None = None


class UserOut(BaseModel):
    id: int
    name: str
    is_organizer: bool
    is_admin: bool


class TokenCreate(BaseModel):
    name: Text = Field(description="user name")
    password: Text
    label: Text = Field("", description="a note to tell your tokens apart")


class TokenOut(BaseModel):
    token: str = Field(description="shown only now; send it as 'Authorization: Bearer <token>'")
    user: str


class TeamCreate(BaseModel):
    name: Text


class TeamJoin(BaseModel):
    invite_code: Text


class TeamOut(BaseModel):
    name: str
    solo: bool
    members: list[str]
    invite_code: str | None = Field(None, description="shown to members only; others join with it")


class ParticipationOut(BaseModel):
    user: str
    requested_at: datetime
    approved: bool


class ParticipantList(BaseModel):
    participants: list[ParticipationOut]


class Health(BaseModel):
    status: str
