"""Competitions, tasks and phases as the API shows them (plain dicts matching ``app.web.schemas``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.competitions.catalog import phase_state
from app.services.competitions.markdown import render_markdown
from app.services.submissions.limits import Limits, upload_limit
from app.storage.blobs import blob_facts
from app.storage.models import Competition, CompetitionOrganizer, Phase, Task, User
from scorers import scorer_class

API = "/api/v1"


def competition_url(slug: str) -> str:
    return f"{API}/competitions/{quote(slug)}"


def task_url(competition: str, task: str) -> str:
    return f"{competition_url(competition)}/tasks/{quote(task)}"


def phase_url(competition: str, task: str, phase: str) -> str:
    return f"{task_url(competition, task)}/phases/{quote(phase)}"


def _files(session: Session, files: list[Any], base: str) -> list[dict[str, Any]]:
    facts = blob_facts(session, [f.blob_id for f in files])
    return [
        {"name": f.name, "size": facts[f.blob_id][0], "sha256": facts[f.blob_id][1], "url": f"{base}/{quote(f.name)}"}
        for f in files
    ]


def phase_view(
    session: Session, phase: Phase, task: Task, competition: str, limits: Limits, now: datetime
) -> dict[str, Any]:
    url = phase_url(competition, task.slug, phase.slug)
    return {
        "slug": phase.slug,
        "title": phase.title,
        "description": phase.description,
        "description_html": render_markdown(phase.description),
        "starts_at": phase.starts_at,
        "ends_at": phase.ends_at,
        "state": phase_state(phase, now),
        "daily_limit": phase.daily_limit,
        "total_limit": phase.total_limit,
        "visibility": phase.visibility,
        "revealed": phase.revealed_at is not None,
        "selection": phase.selection,
        "max_upload_bytes": upload_limit(phase, limits),
        "files": _files(session, list(phase.files), f"{url}/files"),
        "leaderboard_url": f"{url}/leaderboard",
        "submissions_url": f"{url}/submissions",
    }


def task_view(session: Session, task: Task, competition: str, limits: Limits, now: datetime) -> dict[str, Any]:
    described = scorer_class(task.scorer).describe()
    training = [f for f in task.files if f.kind == "training"]
    return {
        "slug": task.slug,
        "title": task.title,
        "description": task.description,
        "description_html": render_markdown(task.description),
        "scorer": {
            key: described[key]
            for key in ("name", "version", "title", "primary_metric", "metrics", "submission_format")
        },
        "scorer_options": task.scorer_options,
        "training_files": _files(session, training, f"{task_url(competition, task.slug)}/files"),
        "phases": [phase_view(session, p, task, competition, limits, now) for p in task.phases],
    }


def competition_view(session: Session, competition: Competition, limits: Limits, now: datetime) -> dict[str, Any]:
    organizers = session.scalars(
        select(User.name)
        .join(CompetitionOrganizer, CompetitionOrganizer.user_id == User.id)
        .where(CompetitionOrganizer.competition_id == competition.id)
        .order_by(User.name)
    )
    return {
        "slug": competition.slug,
        "title": competition.title,
        "description": competition.description,
        "description_html": render_markdown(competition.description),
        "participation": competition.participation,
        "organizers": list(organizers),
        "created_at": competition.created_at,
        "tasks": [task_view(session, t, competition.slug, limits, now) for t in competition.tasks],
    }


def competition_summary(competition: Competition) -> dict[str, Any]:
    return {
        "slug": competition.slug,
        "title": competition.title,
        "participation": competition.participation,
        "created_at": competition.created_at,
        "tasks": [t.slug for t in competition.tasks],
        "url": competition_url(competition.slug),
    }
