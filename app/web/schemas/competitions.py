"""Competitions, tasks and phases as the API (and the competition page) shows them."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.bundles.checks import MAX_WHOLE
from app.services.competitions.catalog import PhaseState, phase_state, task_description
from app.services.competitions.markdown import render_markdown
from app.services.competitions.participation import RequestState, request_state
from app.services.competitions.phase_edits import MAX_DESCRIPTION
from app.services.submissions.limits import Limits, upload_limit
from app.storage.blobs import blob_facts
from app.storage.models import (
    Competition,
    CompetitionOrganizer,
    Participant,
    Participation,
    Phase,
    PhaseChange,
    Selection,
    Task,
    TaskFileKind,
    User,
    Visibility,
)
from app.web.schemas.common import ShortText, text_of
from app.web.schemas.workers import OwnWorkersOut

API = "/api/v1"


def competition_url(slug: str) -> str:
    return f"{API}/competitions/{quote(slug)}"


def task_url(competition: str, task: str) -> str:
    return f"{competition_url(competition)}/tasks/{quote(task)}"


def phase_url(competition: str, task: str, phase: str) -> str:
    return f"{task_url(competition, task)}/phases/{quote(phase)}"


class FileOut(BaseModel):
    name: str
    size: int
    sha256: str
    url: str

    @classmethod
    def of_files(cls, session: Session, files: list[Any], base: str) -> list[FileOut]:
        """Task or phase files (``name``, ``blob_id``) with their size and sha256, under ``base``."""
        facts = blob_facts(session, [f.blob_id for f in files])
        return [
            cls(name=f.name, size=facts[f.blob_id][0], sha256=facts[f.blob_id][1], url=f"{base}/{quote(f.name)}")
            for f in files
        ]


class PhaseOut(BaseModel):
    slug: str
    title: str
    description: str
    description_html: str
    starts_at: datetime | None
    ends_at: datetime | None
    state: PhaseState = Field(description="upcoming, open or closed")
    daily_limit: int | None
    total_limit: int | None
    visibility: Visibility
    revealed: bool
    selection: Selection
    max_upload_bytes: int
    opaque_ids: bool = Field(
        False, description="the ids are the phase's own, not the release's: take them from its inputs file"
    )
    intervals: bool = Field(
        True, description="the leaderboard shows 95% intervals and comparisons of neighbours (off by the bundle)"
    )
    board: str = Field(
        "plain", description="plain, or ladder: a team's public score moves only past the paired standard error"
    )
    execution_time_limit: int | None = Field(
        None, description="seconds one run of the scoring program may take (phases scored by a program)"
    )
    ingestion_program: bool = Field(
        False,
        description="imported with an ingestion program: code submissions run through it, then through the "
        "scoring program; a zip of result files is scored as it is",
    )
    private_share: float | None = Field(
        None, description="the share of the scoring units kept private until the reveal; null: no private split"
    )
    final_submissions: int | None = Field(
        None, description="how many submissions a team marks as final for the private board; null: none"
    )
    frozen_at: datetime | None = Field(
        None, description="after it the public leaderboard stops changing until the reveal; null: never"
    )
    files: list[FileOut] = []
    format_notes: list[str] = Field(
        default_factory=list,
        description="what the scorer tells participants with the submission format, from the phase's public "
        "inputs (a FAMuS CDAE phase: its largest gold role, which a submission's cost is counted against); "
        "given in the phase's own answer, empty in a task's or competition's list",
    )
    own_workers: OwnWorkersOut | None = Field(
        default=None,
        description="given in the phase's own answer when its runs go to its competition's own queue and no worker "
        "of that queue called lately: how many wait and for how long; null otherwise",
    )
    leaderboard_url: str
    submissions_url: str

    @classmethod
    def of(
        cls, session: Session, phase: Phase, task: Task, competition: str, limits: Limits, now: datetime
    ) -> PhaseOut:
        url = phase_url(competition, task.slug, phase.slug)
        return cls(
            slug=phase.slug,
            title=phase.title,
            description=phase.description,
            description_html=render_markdown(phase.description),
            starts_at=phase.starts_at,
            ends_at=phase.ends_at,
            state=phase_state(phase, now),
            daily_limit=phase.daily_limit,
            total_limit=phase.total_limit,
            visibility=phase.visibility,
            revealed=phase.revealed_at is not None,
            selection=phase.selection,
            max_upload_bytes=upload_limit(phase, limits),
            opaque_ids=phase.opaque_ids,
            intervals=phase.intervals,
            board=phase.board,
            execution_time_limit=phase.execution_time_limit,
            ingestion_program=phase.ingestion_program,
            private_share=phase.private_share,
            final_submissions=phase.final_submissions,
            frozen_at=phase.frozen_at,
            files=FileOut.of_files(session, list(phase.files), f"{url}/files"),
            leaderboard_url=f"{url}/leaderboard",
            submissions_url=f"{url}/submissions",
        )


class TaskOut(BaseModel):
    slug: str
    title: str
    description: str
    description_html: str
    scorer: dict[str, Any]
    scorer_options: dict[str, Any]
    training_files: list[FileOut] = []
    phases: list[PhaseOut]

    @classmethod
    def of(cls, session: Session, task: Task, competition: str, limits: Limits, now: datetime) -> TaskOut:
        described = task_description(task).to_dict()
        training = [f for f in task.files if f.kind == TaskFileKind.TRAINING]
        return cls(
            slug=task.slug,
            title=task.title,
            description=task.description,
            description_html=render_markdown(task.description),
            scorer={
                key: described[key]
                for key in ("name", "version", "title", "primary_metric", "metrics", "submission_format")
            },
            scorer_options=task.scorer_options,
            training_files=FileOut.of_files(session, training, f"{task_url(competition, task.slug)}/files"),
            phases=[PhaseOut.of(session, p, task, competition, limits, now) for p in task.phases],
        )


class CompetitionSummary(BaseModel):
    slug: str
    title: str
    participation: Participation
    created_at: datetime
    tasks: list[str]
    url: str

    @classmethod
    def of(cls, competition: Competition) -> CompetitionSummary:
        return cls(
            slug=competition.slug,
            title=competition.title,
            participation=competition.participation,
            created_at=competition.created_at,
            tasks=[t.slug for t in competition.tasks],
            url=competition_url(competition.slug),
        )


class CompetitionOut(BaseModel):
    slug: str
    title: str
    description: str
    description_html: str
    participation: Participation
    organizers: list[str]
    created_at: datetime
    tasks: list[TaskOut]

    @classmethod
    def of(cls, session: Session, competition: Competition, limits: Limits, now: datetime) -> CompetitionOut:
        organizers = session.scalars(
            select(User.name)
            .join(CompetitionOrganizer, CompetitionOrganizer.user_id == User.id)
            .where(CompetitionOrganizer.competition_id == competition.id)
            .order_by(User.name)
        )
        return cls(
            slug=competition.slug,
            title=competition.title,
            description=competition.description,
            description_html=render_markdown(competition.description),
            participation=competition.participation,
            organizers=list(organizers),
            created_at=competition.created_at,
            tasks=[TaskOut.of(session, t, competition.slug, limits, now) for t in competition.tasks],
        )


class CompetitionList(BaseModel):
    competitions: list[CompetitionSummary]


class BundleWarningOut(BaseModel):
    key: str = Field(description="the key path of the bundle the warning is about")
    message: str


class CompetitionCreated(BaseModel):
    slug: str
    created: bool
    url: str
    format: str = Field("podium", description="the bundle's format: podium, codalab-1.5 or codabench-2")
    warnings: list[BundleWarningOut] = Field(
        default_factory=list, description="what loaded but is probably a mistake, by key path"
    )


class ParticipationOut(BaseModel):
    user: str
    requested_at: datetime
    approved: bool
    state: RequestState = Field(description="pending, approved, or refused (may not take part nor ask again)")

    @classmethod
    def of(cls, user: str, row: Participant) -> ParticipationOut:
        return cls(
            user=user, requested_at=row.requested_at, approved=row.approved_at is not None, state=request_state(row)
        )


class ParticipantList(BaseModel):
    participants: list[ParticipationOut]


Description = text_of(MAX_DESCRIPTION)


#: A time as a phase's window takes it: UTC to the minute (``2026-12-01T00:00Z``).
_UTC_MINUTE: dict[str, Any] = {
    "pattern": r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9](:00(\.0+)?)?"
    r"(Z|[+-]00:?00)$"
}
_AT_LEAST_ONE: dict[str, Any] = {"minimum": 1, "maximum": MAX_WHOLE}


class PhaseEdit(BaseModel):
    """What an organizer may change of a phase; a field left out stays as it is."""

    model_config = ConfigDict(extra="forbid", strict=True)

    # The shapes below are declared for clients, not enforced here: ``phase_edits`` checks every field with
    # the bundle's rules (and the end after the start) and names each bad one.
    starts_at: ShortText | None = Field(
        None, description="UTC to the minute, e.g. 2026-12-01T00:00Z; null: open now", json_schema_extra=_UTC_MINUTE
    )
    ends_at: ShortText | None = Field(
        None, description="UTC to the minute; null: the phase stays open for good", json_schema_extra=_UTC_MINUTE
    )
    daily_limit: int | None = Field(
        None, description="submissions per team and UTC day; null: no daily limit", json_schema_extra=_AT_LEAST_ONE
    )
    total_limit: int | None = Field(
        None, description="submissions per team in all; null: no total limit", json_schema_extra=_AT_LEAST_ONE
    )
    visibility: ShortText | None = Field(
        None,
        description="public, or hidden (numbers for organizers only)",
        json_schema_extra={"enum": [*(v.value for v in Visibility), None]},
    )
    description: Description | None = Field(None, description="Markdown")
    frozen_at: ShortText | None = Field(
        None,
        description="UTC to the minute: after it the public board stops changing until the reveal; null: never",
        json_schema_extra=_UTC_MINUTE,
    )
    final_submissions: int | None = Field(
        None,
        description="a phase with a private split: each team marks up to this many final submissions; null: none",
        json_schema_extra=_AT_LEAST_ONE,
    )
    board: ShortText | None = Field(
        None,
        description="plain, or ladder (a team's shown score moves only past the paired standard error); null: plain",
        json_schema_extra={"enum": ["plain", "ladder", None]},
    )
    boards: list[dict[str, Any]] | None = Field(
        None,
        description="the further boards, as the bundle's boards key (name, title, metrics, slice, ranking, by); "
        "null or []: none",
    )

    def changes(self) -> dict[str, Any]:
        """The fields the request named, with their values (``null`` included)."""
        return {key: getattr(self, key) for key in self.model_fields_set}


class PhaseChangeOut(BaseModel):
    """One logged change of a phase's setting."""

    field: str
    old: str | None
    new: str | None
    by: str | None = Field(description="the organizer's user name (null once their account is gone)")
    at: datetime

    @classmethod
    def of(cls, change: PhaseChange) -> PhaseChangeOut:
        by = change.user.name if change.user is not None else None
        return cls(field=change.field, old=change.old_value, new=change.new_value, by=by, at=change.changed_at)


class PhaseChangeList(BaseModel):
    changes: list[PhaseChangeOut]
