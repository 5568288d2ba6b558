"""Organizers' baselines as code: an organizer uploads a program to a code phase, and it runs as a team's does.

The program is stored as a submission of the competition itself (no team, ``is_baseline``, named as the
organizer chose, its version the first digits of the zip's sha256, so that each upload ranks on its own)
awaiting its run, and ``runs.start`` sends the run to the ``gpu`` queue: the same run, validation, scoring
and board as a team's program, marked as a baseline where boards show baselines. No quota is charged.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from app.services.accounts.access import require_organizer
from app.services.code.runs import check_program, is_code_phase, start
from app.services.competitions.catalog import get_phase
from app.services.errors import Conflict, InvalidInput
from app.services.submissions.intake import Upload
from app.services.submissions.limits import MAX_FILE_NAME, MAX_METHOD_NAME
from app.storage.blobs import put_content
from app.storage.models import Submission, SubmissionStatus, User
from app.storage.types import utcnow

#: The name a baseline gets when the organizer gives none.
DEFAULT_NAME = "organizers' baseline"


def submit_baseline(
    session: Session, user: User | None, ref: tuple[str, str, str], upload: Upload, *, now: datetime | None = None
) -> Submission:
    """Store an organizer's program as a baseline of the code phase at ``ref`` and start its run."""
    phase = get_phase(session, *ref)
    organizer = require_organizer(session, user, phase.task.competition)
    if not is_code_phase(phase):
        raise Conflict(f"phase {phase.slug!r} does not run programs (no code: in its bundle); upload no program to it")
    name = upload.method_name.strip() or DEFAULT_NAME
    if len(name) > MAX_METHOD_NAME or "\x00" in name:
        raise InvalidInput(
            "the baseline's name was refused", [{"where": "name", "message": f"at most {MAX_METHOD_NAME} characters"}]
        )
    with upload.content.open() as program:
        check_program(program)
    digest = upload.content.sha256
    submission = Submission(
        phase_id=phase.id,
        team_id=None,
        user_id=organizer.id,
        blob_id=put_content(session, upload.content).id,
        sha256=digest,
        size=upload.content.size,
        original_name=(upload.filename or "program.zip")[:MAX_FILE_NAME],
        method_name=name,
        method_description=upload.method_description.strip(),
        status=SubmissionStatus.AWAITING_RUN,
        is_baseline=True,
        baseline_name=name,
        baseline_version=digest[:12],
        created_at=now or utcnow(),
    )
    session.add(submission)
    session.flush()
    start(session, submission)
    return submission
