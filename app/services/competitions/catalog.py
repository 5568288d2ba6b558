"""Competitions: putting one online from a ``CompetitionSpec``, finding its tasks and phases,
participation requests, and revealing hidden phases."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.services.accounts.access import require_organizer
from app.services.accounts.users import find_user
from app.services.bundles.spec import BundleError, BundleFile, CompetitionSpec, TaskSpec
from app.services.code.inputs import inputs_zip
from app.services.code.settings import CodeCaps
from app.services.competitions.opaque_ids import with_opaque_ids
from app.services.errors import Conflict, InvalidInput, NotFound
from app.storage.blobs import put_blob
from app.storage.models import (
    Competition,
    CompetitionOrganizer,
    Phase,
    PhaseFile,
    Task,
    TaskFile,
    TaskFileKind,
    User,
)
from app.storage.types import utcnow
from scorers import ScorerDescription, ScorerError, get_scorer, scorer_class

IfExists = Literal["error", "skip"]


def create_competition(
    session: Session,
    spec: CompetitionSpec,
    *,
    creator: User | None = None,
    if_exists: IfExists = "error",
    code_caps: CodeCaps | None = None,
) -> tuple[Competition, bool]:
    """Store a checked spec as a new competition; returns it and whether it was created.

    The organizers are the spec's ``organizers`` (existing user names) plus ``creator``. A slug that
    exists already is refused, or with ``if_exists="skip"`` the existing competition is returned
    unchanged (this makes ``podium demo`` idempotent). A code phase asking for more time or memory
    than ``code_caps`` (the server's settings; default: their defaults), or a scoring program for more time,
    is refused by key path.
    """
    existing = session.scalar(select(Competition).where(Competition.slug == spec.slug))
    if existing is not None:
        if if_exists == "skip":
            return existing, False
        raise Conflict(f"a competition with the slug {spec.slug!r} exists already", code="slug_taken")
    _check_caps(spec, code_caps or CodeCaps())
    organizers = _organizers(session, spec.organizers, creator)
    for index, task_spec in enumerate(spec.tasks):
        _check_scorer(task_spec, index)

    competition = Competition(
        slug=spec.slug,
        title=spec.title,
        description=spec.description,
        participation=spec.participation,
        storage_quota_bytes=spec.storage_quota_bytes,
        team_storage_quota_bytes=spec.team_storage_quota_bytes,
    )
    session.add(competition)
    session.flush()
    for user in organizers:
        session.add(CompetitionOrganizer(competition_id=competition.id, user_id=user.id))
    for position, task_spec in enumerate(spec.tasks):
        _add_task(session, competition, task_spec, position)
    session.flush()
    return competition, True


def _organizers(session: Session, names: Sequence[str], creator: User | None) -> list[User]:
    by_id: dict[int, User] = {}
    problems = []
    for index, name in enumerate(names):
        user = find_user(session, name)
        if user is None:
            problems.append({"key": f"organizers[{index}]", "message": f"there is no user named {name!r}"})
        else:
            by_id[user.id] = user
    if problems:
        raise InvalidInput("the competition names organizers who have no account", problems, code="invalid_bundle")
    if creator is not None:
        by_id[creator.id] = creator
    return list(by_id.values())


def task_description(task: Task) -> ScorerDescription:
    """The task's scorer as its options configure it: the metrics, primary metric and directions that its board,
    its tables, its exports and its pages show."""
    return scorer_class(task.scorer).describe(task.scorer_options or {})


def _check_scorer(task: TaskSpec, index: int) -> None:
    try:
        get_scorer(task.scorer, task.scorer_options)
    except ScorerError as exc:
        raise InvalidInput(
            "the task's scorer cannot be used", [{"key": f"tasks[{index}].scorer", "message": str(exc)}]
        ) from None


def _check_caps(spec: CompetitionSpec, caps: CodeCaps) -> None:
    problems = []
    for t, task in enumerate(spec.tasks):
        for p, phase in enumerate(task.phases):
            path = f"tasks[{t}].phases[{p}]"
            problems += caps.scoring_problems(phase.execution_time_limit, path)
            if phase.code is not None:
                problems += caps.problems(phase.code, f"{path}.code")
    if problems:
        raise BundleError(problems)


def _blob_id(session: Session, file: BundleFile) -> int:
    return put_blob(session, file.data, file.sha256).id


def _add_task(session: Session, competition: Competition, spec: TaskSpec, position: int) -> None:
    task = Task(
        competition_id=competition.id,
        slug=spec.slug,
        title=spec.title,
        description=spec.description,
        scorer=spec.scorer,
        scorer_options=dict(spec.scorer_options),
        position=position,
    )
    session.add(task)
    session.flush()
    files = [(TaskFileKind.TRAINING, f) for f in spec.training_files]
    files += [(TaskFileKind.RESOURCE, f) for f in spec.resources]
    for file_position, (kind, file) in enumerate(files):
        session.add(
            TaskFile(
                task_id=task.id, kind=kind, name=file.name, blob_id=_blob_id(session, file), position=file_position
            )
        )
    for phase_position, given in enumerate(spec.phases):
        p = with_opaque_ids(session, (competition.slug, spec.slug, given.slug), spec.scorer, given)
        phase = Phase(
            task_id=task.id,
            slug=p.slug,
            title=p.title,
            description=p.description,
            starts_at=p.starts_at,
            ends_at=p.ends_at,
            gold_blob_id=_blob_id(session, p.gold),
            daily_limit=p.daily_limit,
            total_limit=p.total_limit,
            visibility=p.visibility,
            selection=p.selection,
            max_upload_bytes=p.max_upload_bytes,
            opaque_ids=p.opaque_ids,
            intervals=p.intervals,
            board=p.board,
            boards=[b.to_dict() for b in p.boards] or None,
            execution_time_limit=p.execution_time_limit,
            show_program_stderr=p.show_program_stderr,
            ingestion_program=p.ingestion_program,
            code=p.code.stored() if p.code is not None else None,
            code_inputs_blob_id=_blob_id(session, inputs_zip(p.code_inputs)) if p.code is not None else None,
            private_share=p.private_share,
            # The key of the phase's split (``scorers.split``): made here, kept in the database, never shown.
            split_secret=secrets.token_hex(32) if p.private_share is not None else None,
            private_board=p.private_board,
            final_submissions=p.final_submissions,
            frozen_at=p.frozen_at,
            position=phase_position,
        )
        session.add(phase)
        session.flush()
        for file_position, file in enumerate(p.public_files):
            session.add(
                PhaseFile(phase_id=phase.id, name=file.name, blob_id=_blob_id(session, file), position=file_position)
            )


# -- finding things -----------------------------------------------------------------------------


def list_competitions(session: Session) -> list[Competition]:
    query = select(Competition).options(selectinload(Competition.tasks).selectinload(Task.phases))
    return list(session.scalars(query.order_by(Competition.created_at, Competition.id)))


def get_competition(session: Session, slug: str) -> Competition:
    query = select(Competition).where(Competition.slug == slug)
    competition = session.scalar(query.options(selectinload(Competition.tasks).selectinload(Task.phases)))
    if competition is None:
        raise NotFound(f"there is no competition {slug!r}")
    return competition


def get_task(session: Session, competition_slug: str, task_slug: str) -> Task:
    query = (
        select(Task)
        .join(Competition)
        .where(Competition.slug == competition_slug, Task.slug == task_slug)
        .options(selectinload(Task.phases).selectinload(Phase.files), selectinload(Task.files))
    )
    task = session.scalar(query)
    if task is None:
        get_competition(session, competition_slug)  # says which of the two is missing
        raise NotFound(f"competition {competition_slug!r} has no task {task_slug!r}")
    return task


def get_phase(session: Session, competition_slug: str, task_slug: str, phase_slug: str) -> Phase:
    """The phase at ``competition/task/phase``, with its task and competition loaded."""
    query = (
        select(Phase)
        .join(Task)
        .join(Competition)
        .where(Competition.slug == competition_slug, Task.slug == task_slug, Phase.slug == phase_slug)
        .options(selectinload(Phase.task).selectinload(Task.competition), selectinload(Phase.files))
    )
    phase = session.scalar(query)
    if phase is None:
        get_task(session, competition_slug, task_slug)
        raise NotFound(f"task {competition_slug}/{task_slug} has no phase {phase_slug!r}")
    return phase


class PhaseState(StrEnum):
    """Whether a phase accepts submissions: not yet, now, or no more."""

    UPCOMING = "upcoming"
    OPEN = "open"
    CLOSED = "closed"


def phase_state(phase: Phase, now: datetime) -> PhaseState:
    """Whether the phase accepts submissions at ``now``: the window is [starts_at, ends_at)."""
    if phase.starts_at is not None and now < phase.starts_at:
        return PhaseState.UPCOMING
    if phase.ends_at is not None and now >= phase.ends_at:
        return PhaseState.CLOSED
    return PhaseState.OPEN


# -- organizer actions --------------------------------------------------------------------------


def reveal_phase(session: Session, user: User | None, phase: Phase, now: datetime | None = None) -> Phase:
    """Make a hidden phase's numbers public (idempotent: revealing twice keeps the first time)."""
    require_organizer(session, user, phase.task.competition)
    if phase.revealed_at is None:
        phase.revealed_at = now or utcnow()
        session.flush()
    return phase
