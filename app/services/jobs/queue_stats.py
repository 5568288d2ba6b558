"""The state of the queues as the database knows it: a queued submission's place and when it will
probably be scored (a code submission's place while its program waits to run), counts by status and
queue, and recent times from upload to score.

Everything here is read from the database, so every web process answers the same, whichever
process (or machine) scored the submissions. The estimates use the last ``SAMPLE`` scores:

- the time a scoring takes is the mean of ``score.created_at - submission.started_at`` for the same
  scorer (all scorers when that one has none yet);
- the workers are the distinct ones (process and thread) that scored in the last ``WINDOW`` or hold
  a live claim now, at least one;
- a submission at place ``p`` (in the fair order of ``app.services.jobs.fair``) is expected at
  ``now + p * mean / workers``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from statistics import fmean

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.services.jobs import fair
from app.services.jobs.kinds import QUEUES
from app.services.jobs.registry import KINDS
from app.services.jobs.routing import on_platform, scored_by, served_by
from app.storage.models import CodeRun, JobStatus, Phase, PhaseQueue, Score, Submission, SubmissionStatus, Task

#: How many recent scores the estimates look at.
SAMPLE = 100
#: A worker that scored within this window counts as active.
WINDOW = timedelta(minutes=10)


@dataclass(frozen=True)
class QueuePlace:
    """Where a queued submission stands: 1 is next; ``estimated_scored_at`` is ``None`` before
    anything was ever scored (there is no pace to go by)."""

    position: int
    estimated_scored_at: datetime | None


@dataclass(frozen=True)
class Pace:
    """How fast scoring went lately: mean seconds per scorer and overall, and the active workers."""

    seconds_by_scorer: dict[str, float]
    seconds: float | None
    workers: int

    def seconds_for(self, scorer: str) -> float | None:
        return self.seconds_by_scorer.get(scorer, self.seconds)


def recent_pace(session: Session, now: datetime, *, sample: int = SAMPLE, window: timedelta = WINDOW) -> Pace:
    """The pace of the last ``sample`` scores (newest by id, so the primary key answers it)."""
    rows = session.execute(
        select(Score.scorer, Score.created_at, Submission.started_at, Submission.worker)
        .join(Submission, Submission.id == Score.submission_id)
        .order_by(Score.id.desc())
        .limit(sample)
    ).all()
    durations: dict[str, list[float]] = defaultdict(list)
    workers: set[str] = set()
    for scorer, scored_at, started_at, worker in rows:
        # A later attempt (a rescore) may have started after this score: no duration to learn from it.
        if started_at is not None and started_at <= scored_at:
            durations[scorer].append((scored_at - started_at).total_seconds())
        if worker and scored_at >= now - window:
            workers.add(worker)
    holding = session.scalars(
        select(Submission.worker).where(
            Submission.status == SubmissionStatus.RUNNING, Submission.lease_expires_at >= now
        )
    )
    workers.update(worker for worker in holding if worker)
    every = [seconds for values in durations.values() for seconds in values]
    return Pace(
        seconds_by_scorer={scorer: fmean(values) for scorer, values in durations.items()},
        seconds=fmean(every) if every else None,
        workers=max(1, len(workers)),
    )


def queue_places(session: Session, submissions: Sequence[Submission], now: datetime) -> dict[int, QueuePlace]:
    """The place of each waiting submission among ``submissions``, in the fair order workers take them in
    (``fair``: competitions take turns, then teams): a queued one's in the ``scoring`` queue, with its
    estimate; one awaiting its program's run, its run's in the ``gpu`` queue (no estimate: runs have no
    pace to go by). The others are left out."""
    awaiting = [s for s in submissions if s.status == SubmissionStatus.AWAITING_RUN]
    places: dict[int, QueuePlace] = _run_places(session, awaiting, now)
    queued = [s for s in submissions if s.status == SubmissionStatus.QUEUED]
    if not queued:
        return places
    pace = recent_pace(session, now)
    scorers = dict(
        session.execute(
            select(Phase.id, Task.scorer)
            .join(Task, Task.id == Phase.task_id)
            .where(Phase.id.in_({s.phase_id for s in queued}))
        ).all()
    )
    # A submission of a phase whose program scoring goes to a competition's own queue has its place there, with
    # no estimate (the platform knows nothing of those workers' pace).
    remote = dict(
        session.execute(
            select(PhaseQueue.phase_id, PhaseQueue.queue_id).where(
                PhaseQueue.phase_id.in_({s.phase_id for s in queued}), PhaseQueue.scoring.is_(True)
            )
        ).all()
    )
    order: dict[int, int] = {}
    for queue_id in set(remote.values()) | {None}:
        ids = [s.id for s in queued if remote.get(s.phase_id) == queue_id]
        among = on_platform(Submission) if queue_id is None else scored_by(queue_id)
        order.update(fair.positions(session, Submission, ids, now, among=among))
    for submission in queued:
        position = order.get(submission.id, 1)
        if submission.phase_id in remote:
            places[submission.id] = QueuePlace(position=position, estimated_scored_at=None)
            continue
        seconds = pace.seconds_for(scorers.get(submission.phase_id, ""))
        eta = None if seconds is None else now + timedelta(seconds=position * seconds / pace.workers)
        places[submission.id] = QueuePlace(position=position, estimated_scored_at=eta)
    return places


def _run_places(session: Session, awaiting: Sequence[Submission], now: datetime) -> dict[int, QueuePlace]:
    """The place of the queued code run of each submission of ``awaiting``, by submission."""
    if not awaiting:
        return {}
    runs = dict(
        session.execute(
            select(CodeRun.id, CodeRun.submission_id).where(
                CodeRun.submission_id.in_([s.id for s in awaiting]), CodeRun.status == JobStatus.QUEUED
            )
        ).all()
    )
    # A run of a phase served by a competition's own queue has its place in that queue (``routing``).
    queues = dict(
        session.execute(
            select(CodeRun.id, PhaseQueue.queue_id)
            .join(Submission, Submission.id == CodeRun.submission_id)
            .join(PhaseQueue, PhaseQueue.phase_id == Submission.phase_id)
            .where(CodeRun.id.in_(list(runs)))
        ).all()
    )
    order: dict[int, int] = {}
    for queue_id in set(queues.values()) | {None}:
        ids = [run_id for run_id in runs if queues.get(run_id) == queue_id]
        among = on_platform(CodeRun) if queue_id is None else served_by(queue_id)
        order.update(fair.positions(session, CodeRun, ids, now, among=among))
    return {runs[run_id]: QueuePlace(position=place, estimated_scored_at=None) for run_id, place in order.items()}


def submissions_by_status(session: Session) -> dict[str, int]:
    """How many submissions are in each status (statuses without any are left out)."""
    query = select(Submission.status, func.count()).group_by(Submission.status)
    return dict(session.execute(query).all())


def queued_by_queue(session: Session) -> dict[str, int]:
    """Jobs waiting in the database, per queue: queued submissions (``scoring``), queued runs (``gpu``)."""
    counts = dict.fromkeys(QUEUES, 0)
    for kind in KINDS:
        counts[kind.queue] += session.scalar(select(func.count()).where(kind.row.status == JobStatus.QUEUED)) or 0
    return counts


def upload_to_score_seconds(session: Session, *, sample: int = 1000) -> list[float]:
    """Seconds from upload to first score of the last ``sample`` submissions scored (newest first)."""
    rows = session.execute(
        select(Submission.created_at, Score.created_at)
        .join(Score, Score.submission_id == Submission.id)
        .where(Score.round == 1)
        .order_by(Score.id.desc())
        .limit(sample)
    ).all()
    return [max(0.0, (scored - uploaded).total_seconds()) for uploaded, scored in rows]
