"""The steps of a scoring job, each in the caller's transaction.

A job (see ``app.worker.jobs``) runs them as short transactions: ``claim`` the submission,
``load_inputs``, ``compute`` outside any transaction, then ``record_score`` or ``record_failure``.
Claiming is a compare-and-set on the row, so two workers cannot both claim one round; should a
worker whose lease expired still finish, the unique (submission, round) constraint turns its
second score into a no-op.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.services.scoring.gold import GoldCache, ParsedGold, gold_key
from app.services.submissions.limits import Limits
from app.storage.blobs import read_blob
from app.storage.models import Blob, Phase, Score, Submission, Task
from scorers import ScoreReport, unpack_submission

log = logging.getLogger(__name__)

#: What a participant reads when the platform, not their file, failed.
PLATFORM_FAILURE = (
    "Scoring failed because of a problem on our side, not with your file. "
    "This submission does not count against your limits; the organizers have been told."
)


@dataclass(frozen=True)
class Claim:
    """A claimed scoring round: everything the computation needs, as plain values."""

    submission_id: int
    attempt: int
    round: int
    phase_id: int
    blob_id: int
    gold_blob_id: int
    gold_sha256: str
    scorer: str
    scorer_options: dict[str, Any]


def _claimable(now: datetime) -> Any:
    return or_(
        Submission.status == "queued",
        (Submission.status == "running") & (Submission.lease_expires_at < now),
    )


def claim(
    session: Session, submission_id: int, *, worker: str, now: datetime, lease_seconds: int, max_attempts: int
) -> Claim | None:
    """Take the submission for scoring, or ``None`` if it is not waiting (scored, failed, or held by
    a live worker). A submission interrupted ``max_attempts`` times is failed instead of retried."""
    # One conditional UPDATE: on PostgreSQL a second worker's UPDATE of the same row waits for this
    # one's row lock, then re-checks the condition against the committed row and matches nothing.
    row = session.execute(
        update(Submission)
        .where(Submission.id == submission_id, _claimable(now))
        .values(
            status="running",
            attempts=Submission.attempts + 1,
            started_at=now,
            heartbeat_at=now,
            lease_expires_at=now + timedelta(seconds=lease_seconds),
            worker=worker[:200],
        )
        .returning(Submission.attempts, Submission.scoring_round, Submission.phase_id, Submission.blob_id)
        .execution_options(synchronize_session=False)
    ).one_or_none()
    if row is None:
        return None
    phase = session.execute(
        select(Phase.gold_blob_id, Blob.sha256, Task.scorer, Task.scorer_options)
        .join(Task, Task.id == Phase.task_id)
        .join(Blob, Blob.id == Phase.gold_blob_id)
        .where(Phase.id == row.phase_id)
    ).one()
    found = Claim(
        submission_id=submission_id,
        attempt=row.attempts,
        round=row.scoring_round,
        phase_id=row.phase_id,
        blob_id=row.blob_id,
        gold_blob_id=phase.gold_blob_id,
        gold_sha256=phase.sha256,
        scorer=phase.scorer,
        scorer_options=dict(phase.scorer_options or {}),
    )
    if found.attempt > max_attempts:
        record_failure(
            session,
            found,
            now=now,
            organizer_message=f"scoring was interrupted {max_attempts} times (worker crash or timeout); gave up",
        )
        return None
    return found


def heartbeat(session: Session, found: Claim, *, now: datetime, lease_seconds: int) -> bool:
    """Extend the lease of a running claim; ``False`` if the claim was lost (resumed elsewhere)."""
    result = session.execute(
        update(Submission)
        .where(
            Submission.id == found.submission_id,
            Submission.status == "running",
            Submission.attempts == found.attempt,
        )
        .values(heartbeat_at=now, lease_expires_at=now + timedelta(seconds=lease_seconds))
        .execution_options(synchronize_session=False)
    )
    return getattr(result, "rowcount", 0) == 1


def load_inputs(session: Session, found: Claim, *, gold_cache: GoldCache) -> tuple[ParsedGold, bytes]:
    """The parsed gold (from the cache when possible) and the submitted file's bytes."""
    key = gold_key(found.phase_id, found.gold_sha256, found.scorer, found.scorer_options)
    parsed = gold_cache.get(key, lambda: read_blob(session, found.gold_blob_id))
    return parsed, read_blob(session, found.blob_id)


def compute(parsed: ParsedGold, data: bytes, *, limits: Limits) -> ScoreReport:
    """Score a file against parsed gold (no database); raises whatever the scorer raises."""
    content, _ = unpack_submission(data, max_bytes=limits.max_unzipped_bytes, max_entries=limits.max_zip_entries)
    return parsed.scorer.compute(parsed.gold, parsed.scorer.parse_submission(content, parsed.gold))


def record_score(session: Session, found: Claim, report: ScoreReport, *, now: datetime) -> bool:
    """Store the round's score and mark the submission ``scored``; ``False`` if that round was
    already scored (by a worker that finished first), in which case nothing changes."""
    score = Score(
        submission_id=found.submission_id,
        round=found.round,
        scorer=report.scorer,
        scorer_version=report.version,
        metrics=dict(report.metrics),
        breakdown=report.breakdown,
        units={key: dict(value) for key, value in report.units.items()},
        created_at=now,
    )
    try:
        with session.begin_nested():
            session.add(score)
    except IntegrityError:
        log.info("submission %s round %s was already scored", found.submission_id, found.round)
        return False
    # Only the round being scored moves the status: if a rescore was asked for meanwhile, the
    # submission stays queued for the next round.
    session.execute(
        update(Submission)
        .where(Submission.id == found.submission_id, Submission.scoring_round == found.round)
        .values(
            status="scored",
            finished_at=now,
            lease_expires_at=None,
            participant_message="",
            organizer_message="",
        )
        .execution_options(synchronize_session=False)
    )
    return True


def record_failure(
    session: Session,
    found: Claim,
    *,
    now: datetime,
    organizer_message: str,
    participant_message: str = PLATFORM_FAILURE,
) -> None:
    """Mark a failure the platform caused: ``failed``, the two messages, and the quota given back."""
    session.execute(
        update(Submission)
        .where(
            Submission.id == found.submission_id,
            Submission.scoring_round == found.round,
            Submission.status == "running",
            Submission.attempts == found.attempt,  # not a later attempt that took over an expired lease
        )
        .values(
            status="failed",
            finished_at=now,
            lease_expires_at=None,
            participant_message=participant_message,
            organizer_message=organizer_message[:20_000],
            quota_refunded=True,
        )
        .execution_options(synchronize_session=False)
    )


def give_up(
    session: Session,
    submission_id: int,
    *,
    now: datetime,
    organizer_message: str,
    participant_message: str = PLATFORM_FAILURE,
) -> bool:
    """Fail a submission that could not even be claimed (the database kept failing): ``failed``, the
    two messages, the quota given back. Only a ``queued`` one: a running one belongs to its worker."""
    result = session.execute(
        update(Submission)
        .where(Submission.id == submission_id, Submission.status == "queued")
        .values(
            status="failed",
            finished_at=now,
            lease_expires_at=None,
            participant_message=participant_message,
            organizer_message=organizer_message[:20_000],
            quota_refunded=True,
        )
        .execution_options(synchronize_session=False)
    )
    return getattr(result, "rowcount", 0) == 1


def waiting(session: Session, now: datetime) -> list[int]:
    """Submissions a scoring job should be (re)started for: queued, or running with an expired lease."""
    query = select(Submission.id).where(_claimable(now)).order_by(Submission.created_at, Submission.id)
    return list(session.scalars(query))
