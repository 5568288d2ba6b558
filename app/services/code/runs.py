"""Starting a code run when a program is uploaded to a code phase, and what people may see of it.

The upload (``submissions.intake``) stores the program as the submission's file, ``awaiting_run``, and
``start`` adds its run, sent to the ``gpu`` queue after the commit. ``view`` is the run as one viewer may
see it: the team reads how it ended, its wall time and peak memory, and its program's logs only where
the phase shows logs (a program can print the hidden inputs); organizers always read them. A run no worker
could take yet says what it waits for (``code.placement``: a GPU worker, a worker that can run code), and
organizers read why.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from io import BytesIO
from typing import BinaryIO

from sqlalchemy import select
from sqlalchemy.orm import Session, undefer

from app.services.code.job import RUN_CODE
from app.services.code.settings import CodeSettings
from app.services.errors import InvalidInput
from app.services.jobs.enqueue import enqueue_after_commit
from app.services.workers.queues import OWN_WORKERS, queue_of_phase
from app.storage.blobs import Content
from app.storage.models import CodeRun, Phase, RunStatus, Submission, SubmissionStatus
from codalab.ingestion import is_code_submission


def is_code_phase(phase: Phase) -> bool:
    return phase.code is not None


def runs_as_code(phase: Phase, data: bytes | Content) -> bool:
    """Whether an upload to ``phase`` is a program to run: any upload to a code phase, except, where the phase has
    an ingestion program, a zip of result files (scored as it is, ``codalab.ingestion.is_code_submission``). An
    upload's ``Content`` is read only in the last case, so a large program is never held whole."""
    if phase.code is None:
        return False
    if not CodeSettings.of(phase.code).ingestion:
        return True
    return is_code_submission(data.read() if isinstance(data, Content) else data)


def check_program(data: bytes | BinaryIO) -> None:
    """Refuse, for free, an upload to a code phase that is not a zip (the run unpacks it with every check); a
    file is read only where a zip's directory is, not whole."""
    if not zipfile.is_zipfile(BytesIO(data) if isinstance(data, bytes) else data):
        raise InvalidInput(
            "this phase runs programs: upload your program as a zip (predict.py, or a metadata file with a command)",
            [{"where": "file", "message": "not a zip file"}],
            code="invalid_submission",
        )


def start(session: Session, submission: Submission) -> CodeRun:
    """The run of a just stored submission's program, sent once the transaction commits."""
    run = CodeRun(submission_id=submission.id, program_blob_id=submission.blob_id, status=RunStatus.QUEUED)
    session.add(run)
    session.flush()
    enqueue_after_commit(session, RUN_CODE, run.id)
    return run


@dataclass(frozen=True)
class RunView:
    """A code run as one viewer may see it; ``stage`` is the submission's way: queued, running, scoring,
    scored or failed. ``stdout``/``stderr`` are None where the viewer may not read them."""

    stage: str
    status: RunStatus
    outcome: str
    exit_code: int | None
    timed_out: bool
    out_of_memory: bool
    wall_seconds: float | None
    peak_memory_bytes: int | None
    logs_shown: bool
    stdout: str | None = None
    stderr: str | None = None
    #: While queued: the worker it waits for ("a GPU worker"); organizers also read why, after a colon.
    waiting_for: str | None = None
    #: The GPU it ran on ("GPU 0"; None: the CPU, or not run yet).
    device: str | None = None
    #: How much the program wrote to each, where the logs are shown (only their ends are kept).
    stdout_bytes: int | None = None
    stderr_bytes: int | None = None


def _stage(run: CodeRun, submission: Submission) -> str:
    if submission.status == SubmissionStatus.AWAITING_RUN:
        return "running" if run.status == RunStatus.RUNNING else "queued"
    if submission.status in (SubmissionStatus.QUEUED, SubmissionStatus.RUNNING):
        return "scoring"
    return submission.status.value


def view(session: Session, submission: Submission, *, organizer: bool) -> RunView | None:
    """The submission's run as this viewer may see it; None for a submission that ran no program."""
    query = select(CodeRun).where(CodeRun.submission_id == submission.id)
    run = session.scalar(query.options(undefer(CodeRun.stdout), undefer(CodeRun.stderr)))
    if run is None:
        return None
    phase = session.get(Phase, submission.phase_id)
    shown = organizer or (phase is not None and phase.code is not None and CodeSettings.of(phase.code).show_logs)
    return RunView(
        stage=_stage(run, submission),
        status=run.status,
        outcome=run.outcome,
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        out_of_memory=run.out_of_memory,
        wall_seconds=run.wall_seconds,
        peak_memory_bytes=run.peak_memory_bytes,
        logs_shown=shown,
        stdout=run.stdout if shown else None,
        stderr=run.stderr if shown else None,
        waiting_for=_waiting(session, run, submission, organizer=organizer),
        device=run.device,
        stdout_bytes=run.stdout_bytes if shown else None,
        stderr_bytes=run.stderr_bytes if shown else None,
    )


def _waiting(session: Session, run: CodeRun, submission: Submission, *, organizer: bool) -> str | None:
    """What a queued run waits for; its team reads whom, organizers also why (it can name the worker's paths). A
    run of a phase served by the competition's own queue waits for the organizers' workers (``workers.queues``)."""
    if run.status == RunStatus.QUEUED and (queue := queue_of_phase(session, submission.phase_id)) is not None:
        return f"{OWN_WORKERS}: queue {queue.name}" if organizer else OWN_WORKERS
    if run.status != RunStatus.QUEUED or not run.waiting_for:
        return None
    return run.waiting_for if organizer else run.waiting_for.partition(": ")[0]
