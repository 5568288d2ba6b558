"""A competition's own queues and their workers' credentials, as organizers manage them, and what the pages say
of them.

An organizer creates a queue (a name, unique in the competition), issues credentials for it (the secret is
returned once; only its SHA-256 is stored, as for API tokens: 256 random bits need no slow hash), lists, revokes
and rotates them (a new secret under the same label, the old one revoked at once), and sends a phase's code runs
(and, for a phase scored by a program, its scoring: ``scoring``) to the queue or back to the platform's
(``route_phase``). A worker holding a credential serves only its queue: ``credential_for`` is the one lookup of the
protocol (``app.services.workers.protocol``), and a revoked credential is refused at its next call.

Deleting a queue (``delete_queue``) never refuses for work in flight: its phases go back to the platform's queues,
what its workers hold is put back to wait there at once (the attempt not counted, as when a worker cannot run a
program), and its credentials end with it, so a late result of one of its workers is refused (401).

``describe`` is a queue as its organizers read it: each credential's last contact and the runs it holds, and the
backlog (how many runs and scorings wait, since when). ``unserved`` is what a competition's pages say when work
waits on a queue that no worker served lately; ``phase_unserved`` what a phase's pages (and its API answer) say
when its queue has no live worker.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, delete, func, select, update
from sqlalchemy.orm import Session

from app.services.accounts.access import require_organizer
from app.services.code.job import RUN_CODE
from app.services.errors import Conflict, InvalidInput, NotAuthenticated, NotFound
from app.services.jobs.enqueue import enqueue_after_commit
from app.services.jobs.fair import waiting
from app.services.jobs.lease import RUNNING, put_back_values
from app.services.jobs.routing import scored_by, served_by
from app.services.scoring.job import SCORE_SUBMISSION
from app.storage.models import (
    CodeRun,
    Competition,
    Phase,
    PhaseQueue,
    Submission,
    Task,
    User,
    WorkerCredential,
    WorkerQueue,
)
from app.storage.types import utcnow

#: Every worker credential starts so, which tells it from an API token at a glance.
CREDENTIAL_PREFIX = "pwk_"
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
#: Whom a run of a phase served by a competition's own queue waits for, as its team reads it.
OWN_WORKERS = "the organizers' own workers"
#: A worker that called within this long is live (a waiting worker asks for work every few seconds, a busy one
#: renews its lease several times a lease).
LIVE = timedelta(minutes=2)


def worker_name(credential_id: int) -> str:
    """What a run's ``worker`` column says while a remote worker of this credential holds it."""
    return f"remote:{credential_id}"


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Issued:
    """A new credential and its secret, which exists nowhere else."""

    credential: WorkerCredential
    secret: str


def create_queue(session: Session, user: User | None, competition: Competition, name: str) -> WorkerQueue:
    require_organizer(session, user, competition)
    if not NAME.fullmatch(name):
        raise InvalidInput(
            "the queue's name must be 1 to 64 lowercase letters, digits, '-' or '_', starting with a letter or digit",
            [{"where": "body.name", "message": "not a queue name"}],
        )
    if session.scalar(
        select(WorkerQueue.id).where(WorkerQueue.competition_id == competition.id, WorkerQueue.name == name)
    ):
        raise Conflict(f"{competition.slug!r} already has a queue named {name!r}", code="queue_exists")
    queue = WorkerQueue(competition_id=competition.id, name=name)
    session.add(queue)
    session.flush()
    return queue


def queues_of(session: Session, user: User | None, competition: Competition) -> list[WorkerQueue]:
    require_organizer(session, user, competition)
    query = select(WorkerQueue).where(WorkerQueue.competition_id == competition.id).order_by(WorkerQueue.name)
    return list(session.scalars(query))


def get_queue(session: Session, user: User | None, competition: Competition, name: str) -> WorkerQueue:
    require_organizer(session, user, competition)
    queue = session.scalar(
        select(WorkerQueue).where(WorkerQueue.competition_id == competition.id, WorkerQueue.name == name)
    )
    if queue is None:
        raise NotFound(f"{competition.slug!r} has no queue named {name!r}")
    return queue


def issue_credential(session: Session, queue: WorkerQueue, label: str = "") -> Issued:
    secret = CREDENTIAL_PREFIX + secrets.token_urlsafe(32)
    credential = WorkerCredential(queue_id=queue.id, label=label[:100], key_hash=_hash(secret))
    session.add(credential)
    session.flush()
    return Issued(credential, secret)


def credentials_of(session: Session, queue: WorkerQueue) -> list[WorkerCredential]:
    query = select(WorkerCredential).where(WorkerCredential.queue_id == queue.id).order_by(WorkerCredential.id)
    return list(session.scalars(query))


def _credential(session: Session, queue: WorkerQueue, credential_id: int) -> WorkerCredential:
    credential = session.get(WorkerCredential, credential_id)
    if credential is None or credential.queue_id != queue.id:
        raise NotFound(f"queue {queue.name!r} has no credential {credential_id}")
    return credential


def revoke(
    session: Session, queue: WorkerQueue, credential_id: int, *, now: datetime | None = None
) -> WorkerCredential:
    """End the credential: its worker's next call is refused (a run it holds is resumed after its lease)."""
    credential = _credential(session, queue, credential_id)
    if credential.revoked_at is None:
        credential.revoked_at = now or utcnow()
    session.flush()
    return credential


def rotate(session: Session, queue: WorkerQueue, credential_id: int, *, now: datetime | None = None) -> Issued:
    """A new secret under the same label; the old credential is revoked at once."""
    old = revoke(session, queue, credential_id, now=now)
    return issue_credential(session, queue, old.label)


#: The scorer whose runs (a competition's scoring program) may go to a competition's own queue.
PROGRAM_SCORER = "program"


def _to_platform(session: Session, phase_id: int, *, runs: bool, scorings: bool) -> None:
    """The platform's workers take the phase's waiting runs (and submissions waiting to be scored) now: each gets
    its message (a message costs nothing if it finds none)."""
    now = utcnow()
    if runs:
        for run_id in session.scalars(
            select(CodeRun.id)
            .join(Submission, Submission.id == CodeRun.submission_id)
            .where(Submission.phase_id == phase_id, waiting(CodeRun, now))
        ):
            enqueue_after_commit(session, RUN_CODE, run_id)
    if scorings:
        for submission_id in session.scalars(
            select(Submission.id).where(Submission.phase_id == phase_id, waiting(Submission, now))
        ):
            enqueue_after_commit(session, SCORE_SUBMISSION, submission_id)


def route_phase(
    session: Session, user: User | None, phase: Phase, queue_name: str | None, *, scoring: bool = False
) -> WorkerQueue | None:
    """Send the phase's code runs to its competition's queue ``queue_name``, or back to the platform's (None);
    with ``scoring``, a phase scored by a program sends its scoring there too (its workers then receive the
    phase's gold for the submissions they score). What waits now follows at once; what runs finishes where it
    runs."""
    competition = phase.task.competition
    require_organizer(session, user, competition)
    program = phase.task.scorer == PROGRAM_SCORER
    scoring = scoring and queue_name is not None  # back to the platform: its scoring too
    if scoring and not program:
        raise Conflict(
            "this phase is not scored by a program: only a scoring program's runs can go to a queue",
            code="not_program_scored",
        )
    if phase.code is None and not (scoring or (queue_name is None and program)):
        raise Conflict(
            "this phase runs no code: only a code phase's runs can go to a queue"
            + (" (its scoring program's can, with scoring: true)" if program else ""),
            code="not_a_code_phase",
        )
    session.execute(delete(PhaseQueue).where(PhaseQueue.phase_id == phase.id))
    session.flush()
    _to_platform(session, phase.id, runs=queue_name is None, scorings=not scoring)
    if queue_name is None:
        return None
    queue = get_queue(session, user, competition, queue_name)
    session.add(PhaseQueue(phase_id=phase.id, queue_id=queue.id, scoring=scoring))
    session.flush()
    return queue


def delete_queue(session: Session, user: User | None, competition: Competition, name: str) -> list[str]:
    """Delete the queue: its phases go back to the platform's queues, what its workers hold is put back to wait
    there (the attempt not counted), its credentials end with it. The phases moved back (task/phase)."""
    queue = get_queue(session, user, competition, name)
    moved = list(describe(session, queue).phases)
    workers = [worker_name(c.id) for c in credentials_of(session, queue)]
    phase_ids = list(session.scalars(select(PhaseQueue.phase_id).where(PhaseQueue.queue_id == queue.id)))
    for model in (CodeRun, Submission):
        session.execute(
            update(model)
            .where(model.status == RUNNING, model.worker.in_(workers))
            .values(**put_back_values(model))
            .execution_options(synchronize_session=False)
        )
    session.execute(delete(PhaseQueue).where(PhaseQueue.queue_id == queue.id))
    session.execute(delete(WorkerCredential).where(WorkerCredential.queue_id == queue.id))
    session.execute(delete(WorkerQueue).where(WorkerQueue.id == queue.id))
    session.flush()
    for phase_id in phase_ids:
        _to_platform(session, phase_id, runs=True, scorings=True)
    return moved


def queue_of_phase(session: Session, phase_id: int) -> WorkerQueue | None:
    query = (
        select(WorkerQueue)
        .join(PhaseQueue, PhaseQueue.queue_id == WorkerQueue.id)
        .where(PhaseQueue.phase_id == phase_id)
    )
    return session.scalar(query)


def scores_remotely(session: Session, phase_id: int) -> bool:
    """Whether the phase sends its program scoring to its competition's queue."""
    return bool(session.scalar(select(PhaseQueue.scoring).where(PhaseQueue.phase_id == phase_id)))


def credential_for(session: Session, secret: str) -> WorkerCredential:
    """The live credential whose secret this is; refused (401) when unknown or revoked."""
    credential = session.scalar(select(WorkerCredential).where(WorkerCredential.key_hash == _hash(secret)))
    if credential is None:
        raise NotAuthenticated("unknown worker credential", code="bad_credential")
    if credential.revoked_at is not None:
        raise NotAuthenticated("this worker credential was revoked; ask the organizers for a new one", code="revoked")
    return credential


def in_queue(queue_id: int) -> ColumnElement[bool]:
    """Code runs of the phases that send them to queue ``queue_id``."""
    return served_by(queue_id)


@dataclass(frozen=True)
class CredentialView:
    id: int
    label: str
    created_at: datetime
    revoked_at: datetime | None
    last_contact_at: datetime | None
    live: bool
    #: The runs a worker of this credential holds now.
    running: tuple[int, ...]
    #: The submissions a worker of this credential scores now (a phase's scoring program).
    scoring: tuple[int, ...] = ()


@dataclass(frozen=True)
class QueueView:
    name: str
    competition: str
    phases: tuple[str, ...]
    credentials: tuple[CredentialView, ...]
    #: Runs and scorings that wait for a worker of this queue, and since when the oldest waits.
    waiting: int
    oldest_waiting_since: datetime | None
    #: The phases (of ``phases``) that send their program scoring here too.
    scoring_phases: tuple[str, ...] = ()

    @property
    def live(self) -> bool:
        return any(c.live for c in self.credentials)


def _held(session: Session, model: type[CodeRun] | type[Submission], where: ColumnElement[bool], now: datetime) -> Any:
    return session.execute(
        select(model.worker, model.id).where(where, model.status == RUNNING, model.lease_expires_at >= now)
    ).all()


def _backlog(session: Session, queue_id: int, now: datetime) -> tuple[int, datetime | None]:
    count = 0
    oldest: datetime | None = None
    for model, where in ((CodeRun, in_queue(queue_id)), (Submission, scored_by(queue_id))):
        found, first = session.execute(
            select(func.count(model.id), func.min(model.created_at)).where(where, waiting(model, now))
        ).one()
        count += int(found)
        if first is not None and (oldest is None or first < oldest):
            oldest = first
    return count, oldest


def describe(session: Session, queue: WorkerQueue, *, now: datetime | None = None) -> QueueView:
    now = now or utcnow()
    competition = session.get(Competition, queue.competition_id)
    assert competition is not None
    phases = session.execute(
        select(Task.slug, Phase.slug, PhaseQueue.scoring)
        .join(Phase, Phase.task_id == Task.id)
        .join(PhaseQueue, PhaseQueue.phase_id == Phase.id)
        .where(PhaseQueue.queue_id == queue.id)
        .order_by(Task.slug, Phase.slug)
    ).all()
    held = _held(session, CodeRun, in_queue(queue.id), now)
    scored = _held(session, Submission, scored_by(queue.id), now)
    views = tuple(
        CredentialView(
            id=c.id,
            label=c.label,
            created_at=c.created_at,
            revoked_at=c.revoked_at,
            last_contact_at=c.last_contact_at,
            live=c.revoked_at is None and c.last_contact_at is not None and c.last_contact_at >= now - LIVE,
            running=tuple(sorted(run for worker, run in held if worker == worker_name(c.id))),
            scoring=tuple(sorted(row for worker, row in scored if worker == worker_name(c.id))),
        )
        for c in credentials_of(session, queue)
    )
    count, oldest = _backlog(session, queue.id, now)
    return QueueView(
        name=queue.name,
        competition=competition.slug,
        phases=tuple(f"{task}/{phase}" for task, phase, _ in phases),
        credentials=views,
        waiting=count,
        oldest_waiting_since=oldest,
        scoring_phases=tuple(f"{task}/{phase}" for task, phase, scoring in phases if scoring),
    )


def unserved(session: Session, competition_id: int, *, now: datetime | None = None) -> list[QueueView]:
    """The competition's queues where work waits and no worker called lately (what its pages warn of)."""
    now = now or utcnow()
    queues = session.scalars(select(WorkerQueue).where(WorkerQueue.competition_id == competition_id))
    views = [describe(session, queue, now=now) for queue in queues]
    return [view for view in views if view.waiting and not view.live]


def phase_unserved(session: Session, phase_id: int, *, now: datetime | None = None) -> QueueView | None:
    """The queue of the phase when no worker of it called lately (its pages say so, with how long the oldest of
    its runs waits); ``None`` where the platform serves the phase or a worker of its queue is live."""
    queue = queue_of_phase(session, phase_id)
    if queue is None:
        return None
    view = describe(session, queue, now=now)
    return None if view.live else view
