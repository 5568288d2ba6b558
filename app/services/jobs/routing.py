"""Which job rows the platform's own workers take: every row but the code runs of phases that send them to a
competition's own queue (``PhaseQueue``, served by the organizers' remote workers: ``app.services.workers``), and
the submissions of phases that send their program scoring there too (``PhaseQueue.scoring``).

The claim (``claiming.eligible``) and the sweepers (``dispatch``) both read ``on_platform``, so a run of such a
phase is never taken nor sent again by the platform; moving the phase back (deleting its ``PhaseQueue``) makes
its waiting runs (and submissions waiting to be scored) the platform's at once, and the sweeper sends them.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, select, true

from app.services.jobs.lease import JobRow
from app.storage.models import CodeRun, PhaseQueue, Submission


def routed_phases() -> ColumnElement[bool]:
    """Code runs whose phase sends them to a competition's own queue."""
    remote = select(Submission.id).join(PhaseQueue, PhaseQueue.phase_id == Submission.phase_id)
    return CodeRun.submission_id.in_(remote)


def served_by(queue_id: int) -> ColumnElement[bool]:
    """Code runs whose phase sends them to the queue ``queue_id``."""
    phases = select(PhaseQueue.phase_id).where(PhaseQueue.queue_id == queue_id)
    return CodeRun.submission_id.in_(select(Submission.id).where(Submission.phase_id.in_(phases)))


def scored_remotely() -> ColumnElement[bool]:
    """Submissions whose phase sends its program scoring to a competition's own queue."""
    return Submission.phase_id.in_(select(PhaseQueue.phase_id).where(PhaseQueue.scoring.is_(True)))


def scored_by(queue_id: int) -> ColumnElement[bool]:
    """Submissions whose phase sends its program scoring to the queue ``queue_id``."""
    phases = select(PhaseQueue.phase_id).where(PhaseQueue.queue_id == queue_id, PhaseQueue.scoring.is_(True))
    return Submission.phase_id.in_(phases)


def on_platform(model: JobRow) -> ColumnElement[bool]:
    """The rows of ``model`` that the platform's workers take."""
    if model is CodeRun:
        return ~routed_phases()
    if model is Submission:
        return ~scored_remotely()
    return true()
