"""The steps of a scoring job, each in the caller's transaction.

The job (``app.services.scoring.job``) runs them as two short transactions around the computation:
``claim`` the submission and read its file (``submitted_file``), then, once ``compute`` ran outside
any transaction (the gold comes from the process's cache; ``load_gold`` reads it on a miss),
``record_score`` (with the score's ``interval``, also computed outside any transaction) or
``record_failure``. Five statements per job: the fewer round trips to the database, the more workers
one database serves (``bench/queue_bench.py --probe``).
Claiming takes the row's lease (``app.services.jobs.lease``), so two workers cannot both claim one
round; should a worker whose lease expired still finish, the unique (submission, round) constraint
turns its second score into a no-op.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.services.jobs import lease
from app.services.scoring.gold import GoldCache, GoldRef, ParsedGold, gold_of, parsed_gold
from app.services.scoring.handoff import Parsed
from app.services.scoring.validation import validate
from app.services.submissions.limits import Limits
from app.storage.blobs import read_blob
from app.storage.models import Score, Submission, SubmissionStatus
from leaderboard.uncertainty import interval_for, interval_record
from scorers import ScoreReport
from scorers.split import Split, SplitReport, split_report

log = logging.getLogger(__name__)

#: What a participant reads when the platform, not their file, failed.
PLATFORM_FAILURE = (
    "Scoring failed because of a problem on our side, not with your file. "
    "This submission does not count against your limits; the organizers have been told."
)
#: The longest error kept for the organizers.
ERROR_CHARS = 20_000


@dataclass(frozen=True)
class Claim:
    """A claimed scoring round: everything the computation needs, as plain values."""

    submission_id: int
    attempt: int
    round: int
    blob_id: int
    gold: GoldRef
    #: The submitted file's sha256 as the row records it (what a parse handed over at upload is keyed by).
    sha256: str = ""


def claim(
    session: Session, submission_id: int, *, worker: str, now: datetime, lease_seconds: int, max_attempts: int
) -> Claim | None:
    """Take the submission for scoring, or ``None`` if it is not waiting (scored, failed, or held by
    a live worker). A submission interrupted ``max_attempts`` times is failed instead of retried."""
    row = lease.take(
        session,
        Submission,
        submission_id,
        worker=worker,
        now=now,
        lease_seconds=lease_seconds,
        returning=(Submission.scoring_round, Submission.phase_id, Submission.blob_id, Submission.sha256),
    )
    if row is None:
        return None
    taken = Claim(
        submission_id, row.attempts, row.scoring_round, row.blob_id, gold_of(session, row.phase_id), row.sha256
    )
    if taken.attempt > max_attempts:
        record_failure(
            session,
            taken,
            now=now,
            organizer_message=f"scoring was interrupted {max_attempts} times (worker crash or timeout); gave up",
        )
        return None
    return taken


def heartbeat(session: Session, held: Claim, *, now: datetime, lease_seconds: int) -> bool:
    """Extend the lease of a running claim; ``False`` if the claim was lost (resumed elsewhere)."""
    return lease.renew(session, Submission, held.submission_id, held.attempt, now=now, lease_seconds=lease_seconds)


def submitted_file(session: Session, held: Claim) -> bytes:
    """The submitted file's bytes."""
    return read_blob(session, held.blob_id)


def load_gold(session: Session, held: Claim, *, gold_cache: GoldCache) -> ParsedGold:
    """The parsed gold, read from the database when the cache misses it."""
    return parsed_gold(session, held.gold, gold_cache)


def cached_gold(held: Claim, gold_cache: GoldCache) -> ParsedGold | None:
    """The parsed gold when this process has it, without the database."""
    return gold_cache.peek(held.gold.key)


def compute(gold: ParsedGold, data: bytes | Parsed, *, limits: Limits) -> ScoreReport:
    """Score a file against parsed gold (no database); raises whatever the scorer raises. The file is
    validated again, unless ``data`` is the upload's parse of it, handed over in this process
    (``handoff``: the same bytes validated against the same public view)."""
    submission = data.submission if isinstance(data, Parsed) else validate(gold, data, limits)
    return gold.scorer.compute(gold.gold, submission)


def compute_split(gold: ParsedGold, data: bytes | Parsed, split: Split, *, limits: Limits) -> SplitReport:
    """``compute`` in a phase with a private split: the public units' report apart from the private board's."""
    submission = data.submission if isinstance(data, Parsed) else validate(gold, data, limits)
    return split_report(gold.scorer, gold.gold, submission, split)


def interval(gold: ParsedGold, held: Claim, report: ScoreReport) -> dict[str, Any] | None:
    """The primary metric's interval over the report's units (no database), stored beside the score so that
    boards need not compute it; ``None`` where the phase shows no intervals or the report has no units.
    A failure here costs the interval, never the score: the board computes it from the units instead."""
    if not held.gold.intervals or not report.units:
        return None
    metric = gold.scorer.described().primary_metric
    try:
        return interval_record(interval_for(gold.scorer, report.units, metric, seed=held.gold.seed), metric)
    except Exception:
        log.exception("the interval of submission %s could not be computed", held.submission_id)
        return None


def record_score(
    session: Session,
    held: Claim,
    report: ScoreReport,
    *,
    now: datetime,
    interval: dict[str, Any] | None = None,
    private: SplitReport | None = None,
) -> bool:
    """Store the round's score (with its ``interval``) and mark the submission ``scored``; ``False`` if that
    round was already scored (by a worker that finished first), in which case nothing changes. With a split,
    ``report`` is the public units' and ``private`` adds the private board's metrics and the private units."""
    values = {
        "private_metrics": dict(private.private_metrics) if private is not None else None,
        "private_units": {k: dict(v) for k, v in private.private_units.items()} if private is not None else None,
        "private_columns": dict(private.private_columns) if private is not None else None,
        "submission_id": held.submission_id,
        "round": held.round,
        "scorer": report.scorer,
        "scorer_version": report.version,
        "metrics": dict(report.metrics),
        "breakdown": report.breakdown,
        "units": {key: dict(value) for key, value in report.units.items()},
        "interval": interval,
        "created_at": now,
    }
    # One statement, no savepoint: the unique (submission, round) turns a second score into nothing.
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    statement = insert(Score).values(**values).on_conflict_do_nothing(index_elements=["submission_id", "round"])
    stored = session.scalar(statement.returning(Score.id))
    if stored is None:
        log.info("submission %s round %s was already scored", held.submission_id, held.round)
        return False
    # Only the round being scored moves the status: if a rescore was asked for meanwhile, the
    # submission stays queued for the next round.
    session.execute(
        update(Submission)
        .where(Submission.id == held.submission_id, Submission.scoring_round == held.round)
        .values(
            status=SubmissionStatus.SCORED,
            finished_at=now,
            lease_expires_at=None,
            participant_message="",
            organizer_message="",
        )
        .execution_options(synchronize_session=False)
    )
    return True


def _failure(organizer_message: str, participant_message: str) -> dict[str, object]:
    """What a failure the platform caused writes: both messages, and the quota given back."""
    return {
        "participant_message": participant_message,
        "organizer_message": organizer_message[:ERROR_CHARS],
        "quota_refunded": True,
    }


def record_failure(
    session: Session,
    held: Claim,
    *,
    now: datetime,
    organizer_message: str,
    participant_message: str = PLATFORM_FAILURE,
    refund: bool = True,
) -> bool:
    """Mark a failure the platform caused: ``failed``, the two messages, and the quota given back (unless
    ``refund`` is false: a scoring program failed on the team's file, ``scoring.programs``); ``False`` if a
    later attempt took the submission over (or the round changed), then nothing changes."""
    return lease.finish(
        session,
        Submission,
        held.submission_id,
        held.attempt,
        SubmissionStatus.FAILED,
        now=now,
        where=(Submission.scoring_round == held.round,),
        **{**_failure(organizer_message, participant_message), "quota_refunded": refund},
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
    return lease.give_up(
        session,
        Submission,
        submission_id,
        SubmissionStatus.FAILED,
        now=now,
        **_failure(organizer_message, participant_message),
    )
