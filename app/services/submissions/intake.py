"""Accepting a submission: the cheap checks first, then validation against the gold, then storage.

1. The phase exists, the user may take part, the phase is open, the file is within the size limit
   and the team has a submission left (a cheap first look, before any parsing).
2. The file is unpacked with bounds and parsed against the phase's gold. A bad file is refused here
   with the scorer's problems; nothing is stored and no quota is spent.
3. Under the team's lock the limit (and the storage quotas, ``storage_quota``) is counted again, the blob
   and a ``queued`` submission are stored, and the scoring job is enqueued for after the commit.

An upload with an ``Idempotency-Key`` that this user sent before (within a day, with the same file to
the same phase) is answered with the submission the first one made, before step 1 and again under
the team's lock in step 3 (``app.services.submissions.idempotency``): it is never stored twice.

Step 2 may take seconds on a large file, so the read transaction of step 1 is ended before it (when
it has only read): no lock is held while parsing, and step 3 starts a fresh, short write transaction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.accounts.access import require_participant, require_user
from app.services.accounts.teams import ensure_team, team_of
from app.services.code import runs as code_runs
from app.services.competitions.catalog import PhaseState, get_phase, phase_state
from app.services.errors import InvalidInput, NotFound, PhaseClosed, Unavailable
from app.services.jobs.enqueue import enqueue_after_commit
from app.services.scoring import programs
from app.services.scoring.gold import GoldCache, gold_key
from app.services.scoring.handoff import ParsedSubmissions
from app.services.scoring.job import SCORE_SUBMISSION
from app.services.scoring.validation import validate
from app.services.submissions import idempotency, quota, storage_quota
from app.services.submissions.limits import (
    MAX_FILE_NAME,
    MAX_METHOD_DESCRIPTION,
    MAX_METHOD_NAME,
    Limits,
    too_large,
    upload_limit,
)
from app.storage.blobs import Content, put_content, read_blob
from app.storage.db import end_read_transaction
from app.storage.models import Blob, Phase, Submission, SubmissionStatus, User
from app.storage.types import utcnow
from scorers import ScorerError, ValidationError

log = logging.getLogger(__name__)


class Upload:
    """A submitted file and its description. ``content`` is bytes or a file spooled and hashed as it
    arrived (``app.web.uploads``); ``data`` reads it whole, for the checks that parse it."""

    def __init__(
        self, data: bytes | Content, filename: str, method_name: str = "", method_description: str = ""
    ) -> None:
        self.content = data if isinstance(data, Content) else Content.of_bytes(data)
        self.filename = filename
        self.method_name = method_name
        self.method_description = method_description

    @property
    def data(self) -> bytes:
        return self.content.read()


@dataclass(frozen=True)
class Accepted:
    submission: Submission
    quota: quota.QuotaUsage
    #: The submission an earlier request with the same ``Idempotency-Key`` made.
    replayed: bool = False


@dataclass(frozen=True)
class _Plan:
    user_id: int
    phase_id: int
    phase_slug: str
    competition_id: int
    gold_blob_id: int
    gold_key: tuple[int, str, str, str]
    gold_bytes: bytes | None
    #: A code phase: the upload is a program, run before its output is validated and scored (``services.code``).
    code: bool = False


def check_open(phase: Phase, now: datetime) -> None:
    state = phase_state(phase, now)
    if state == PhaseState.UPCOMING:
        assert phase.starts_at is not None
        raise PhaseClosed(
            f"phase {phase.slug!r} is not open yet; it opens at {phase.starts_at:%Y-%m-%d %H:%M} UTC",
            opens_at=phase.starts_at,
        )
    if state == PhaseState.CLOSED:
        assert phase.ends_at is not None
        raise PhaseClosed(
            f"phase {phase.slug!r} closed at {phase.ends_at:%Y-%m-%d %H:%M} UTC; it accepts no more submissions",
            closed_at=phase.ends_at,
        )


def check_text(upload: Upload) -> None:
    problems = []
    if len(upload.method_name) > MAX_METHOD_NAME:
        problems.append({"where": "method_name", "message": f"at most {MAX_METHOD_NAME} characters"})
    if len(upload.method_description) > MAX_METHOD_DESCRIPTION:
        problems.append({"where": "method_description", "message": f"at most {MAX_METHOD_DESCRIPTION} characters"})
    fields = {
        "method_name": upload.method_name,
        "method_description": upload.method_description,
        "file": upload.filename,
    }
    problems += [
        {"where": where, "message": "contains a NUL character"} for where, text in fields.items() if "\x00" in text
    ]
    if problems:
        raise InvalidInput("the submission's description was refused", problems)


def submit(
    session: Session,
    user: User | None,
    ref: tuple[str, str, str],
    upload: Upload,
    *,
    limits: Limits,
    gold_cache: GoldCache,
    now: datetime | None = None,
    key: str | None = None,
    handoff: ParsedSubmissions | None = None,
) -> Accepted:
    """Check, validate and store one upload to the phase at ``ref`` = (competition, task, phase);
    with an idempotency ``key`` seen before, the submission it made. With a ``handoff`` (where this
    process scores), what validation parsed waits there for the submission's job."""
    now = now or utcnow()
    user = require_user(user)
    check_text(upload)
    if key is not None:
        earlier = replay(session, user.id, key, get_phase(session, *ref), upload.content.sha256, now)
        if earlier is not None:
            return earlier
    plan = _plan(session, user, ref, upload, limits, gold_cache, now)
    end_read_transaction(session)  # no lock or snapshot is held while the file is parsed
    if plan.code:
        with upload.content.open() as program:
            code_runs.check_program(program)
        parsed = None
    else:
        parsed = _validate(session, plan, upload, limits, gold_cache)
    accepted = _record(session, plan, upload, limits, now, key)
    if handoff is not None and parsed is not None and not accepted.replayed:
        handoff.put(plan.gold_key, accepted.submission.sha256, parsed[0], upload.content.size)
    return accepted


def replay(session: Session, user_id: int, key: str, phase: Phase, digest: str, now: datetime) -> Accepted | None:
    found = idempotency.original(session, user_id, key, phase_id=phase.id, sha256=digest, now=now)
    if found is None:
        return None
    return Accepted(found, quota.usage(session, phase, found.team_id, now), replayed=True)


def precheck(
    session: Session, user: User, ref: tuple[str, str, str], size: int, limits: Limits, now: datetime
) -> Phase:
    """The checks that need no byte of the file (step 1): the phase, the user's right to take part, the phase
    open, the size, the team's submissions left and the storage quotas; the phase."""
    phase = get_phase(session, *ref)
    task = phase.task
    require_participant(session, user, task.competition)
    check_open(phase, now)
    limit = upload_limit(phase, limits)
    if size > limit:
        raise too_large(limit, size)
    team = team_of(session, user, task.competition_id)
    quota.check(quota.usage(session, phase, team.id if team else None, now), phase.slug)
    storage_quota.check(session, task.competition, team.id if team else None, size, limits)
    return phase


def _plan(
    session: Session,
    user: User,
    ref: tuple[str, str, str],
    upload: Upload,
    limits: Limits,
    gold_cache: GoldCache,
    now: datetime,
) -> _Plan:
    phase = precheck(session, user, ref, upload.content.size, limits, now)
    task = phase.task
    gold_sha = session.scalar(select(Blob.sha256).where(Blob.id == phase.gold_blob_id))
    assert gold_sha is not None
    key = gold_key(phase.id, gold_sha, task.scorer, task.scorer_options)
    # Only an upload to a code phase is read here (with an ingestion program: is it code or results?).
    code = code_runs.is_code_phase(phase) and code_runs.runs_as_code(phase, upload.content)
    return _Plan(
        user_id=user.id,
        phase_id=phase.id,
        phase_slug=phase.slug,
        competition_id=task.competition_id,
        gold_blob_id=phase.gold_blob_id,
        gold_key=key,
        gold_bytes=None if key in gold_cache or code else read_blob(session, phase.gold_blob_id),
        code=code,
    )


def _validate(
    session: Session, plan: _Plan, upload: Upload, limits: Limits, gold_cache: GoldCache
) -> tuple[Any] | None:
    """The upload parsed against the gold's public view, for its job; ``None`` where the job will not take it."""

    def gold_bytes() -> bytes:
        # Cached at planning time but evicted since: read it again (rare).
        return plan.gold_bytes if plan.gold_bytes is not None else read_blob(session, plan.gold_blob_id)

    try:
        parsed = gold_cache.get(plan.gold_key, gold_bytes)
    except ScorerError as exc:
        log.error("phase %s: the gold cannot be used by its scorer: %s", plan.phase_id, exc)
        raise Unavailable(
            "this phase cannot check submissions at the moment; its organizers need to fix its gold or scorer"
        ) from None
    try:
        submission = validate(parsed, upload.data, limits)
        # A scoring program's job reads the blob itself: nothing to hand over.
        return None if programs.runs_program(parsed) else (submission,)
    except ValidationError as exc:
        raise InvalidInput(
            exc.summary().splitlines()[0],
            ({"where": p.where, "message": p.message} for p in exc.problems),
            code="invalid_submission",
            total=exc.total,
        ) from None


def _record(session: Session, plan: _Plan, upload: Upload, limits: Limits, now: datetime, key: str | None) -> Accepted:
    # The phase's row is held (key share) until the submission is committed: a competition being deleted waits for
    # this upload (and its rows go with it), or went first, and the upload is told so.
    if session.scalar(select(Phase.id).where(Phase.id == plan.phase_id).with_for_update(key_share=True)) is None:
        raise NotFound("the phase was deleted while the file was being checked")
    user = session.get(User, plan.user_id)
    phase = session.get(Phase, plan.phase_id)
    assert user is not None and phase is not None
    team = ensure_team(session, user, plan.competition_id)
    competition = phase.task.competition
    storage_quota.lock(session, competition, team.id, limits)
    quota.lock_entry(session, phase.id, team.id)
    digest = upload.content.sha256
    # A request with the same key that was being checked meanwhile has committed by now (it held
    # this lock): its submission is the answer, before any limit is counted.
    earlier = replay(session, user.id, key, phase, digest, now) if key is not None else None
    if earlier is not None:
        return earlier
    quota.check(quota.usage(session, phase, team.id, now), phase.slug)
    storage_quota.check(session, competition, team.id, upload.content.size, limits)  # counted under the locks
    blob = put_content(session, upload.content)
    submission = Submission(
        phase_id=phase.id,
        team_id=team.id,
        user_id=user.id,
        blob_id=blob.id,
        sha256=digest,
        size=upload.content.size,
        original_name=(upload.filename or "submission")[:MAX_FILE_NAME],
        method_name=upload.method_name.strip(),
        method_description=upload.method_description.strip(),
        status=SubmissionStatus.AWAITING_RUN if plan.code else SubmissionStatus.QUEUED,
        created_at=now,
    )
    session.add(submission)
    session.flush()
    if key is not None:
        idempotency.remember(session, user.id, key, submission, now=now)
    if plan.code:
        code_runs.start(session, submission)
    else:
        enqueue_after_commit(session, SCORE_SUBMISSION, submission.id)
    return Accepted(submission, quota.usage(session, phase, team.id, now))
