"""Files participants may download: a task's training files and a phase's public inputs.

Gold files and organizer-only resources are never served here: the lookups below only ever reach
``task_files`` of kind ``training`` and ``phase_files``.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.competitions.catalog import get_phase, get_task
from app.services.errors import NotFound
from app.storage.models import PhaseFile, TaskFile, TaskFileKind


def training_file(session: Session, competition: str, task_slug: str, name: str) -> int:
    """The blob of a training file of the task (``blobs.open_stream`` reads it)."""
    task = get_task(session, competition, task_slug)
    query = select(TaskFile.blob_id).where(
        TaskFile.task_id == task.id, TaskFile.kind == TaskFileKind.TRAINING, TaskFile.name == name
    )
    blob_id = session.scalar(query)
    if blob_id is None:
        raise NotFound(f"task {competition}/{task_slug} has no training file {name!r}")
    return blob_id


def phase_file(session: Session, competition: str, task_slug: str, phase_slug: str, name: str) -> int:
    """The blob of a public input file of the phase."""
    phase = get_phase(session, competition, task_slug, phase_slug)
    blob_id = session.scalar(select(PhaseFile.blob_id).where(PhaseFile.phase_id == phase.id, PhaseFile.name == name))
    if blob_id is None:
        raise NotFound(f"phase {competition}/{task_slug}/{phase_slug} has no public file {name!r}")
    return blob_id
