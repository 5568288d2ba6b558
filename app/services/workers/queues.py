"""A competition's own queues and their workers' credentials, as organizers manage them, and what the pages say
of them.

An organizer creates a queue (a name, unique in the competition), issues credentials for it (the secret is
returned once; only its SHA-256 is stored, as for API tokens: 256 random bits need no slow hash), lists, revokes
and rotates them (a new secret under the same label, the old one revoked at once), and sends a phase's code runs
to the queue or back to the platform's (``route_phase``). A worker holding a credential serves only its queue:
``credential_for`` is the one lookup of the protocol (``app.services.workers.protocol``), and a revoked credential
is refused at its next call.

``describe`` is a queue as its organizers read it: each credential's last contact and the runs it holds, and the
backlog (how many runs wait, since when). ``unserved`` is what a competition's pages say when runs wait on a queue
that no worker served lately.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, delete, func, select
from sqlalchemy.orm import Session

from app.services.accounts.access import require_organizer
from app.services.code.job import RUN_CODE
from app.services.errors import Conflict, InvalidInput, NotAuthenticated, NotFound
from app.services.jobs.enqueue import enqueue_after_commit
from app.services.jobs.fair import waiting
from app.services.jobs.routing import served_by
from app.storage.models import (
    CodeRun,
    Competition,
    Phase,
    PhaseQueue,
    RunStatus,
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


def route_phase(session: Session, user: User | None, phase: Phase, queue_name: str | None) -> WorkerQueue | None:
    """Send the phase's code runs to its competition's queue ``queue_name``, or back to the platform's (None).
    Runs waiting now follow at once; a run already running finishes where it runs."""
    competition = phase.task.competition
    require_organizer(session, user, competition)
    if phase.code is None:
        raise Conflict("this phase runs no code: only a code phase's runs can go to a queue", code="not_a_code_phase")
    session.execute(delete(PhaseQueue).where(PhaseQueue.phase_id == phase.id))
    if queue_name is None:
        session.flush()
        # The platform's workers take them now: each gets its message (a message costs nothing if it finds none).
        for run_id in session.scalars(
            select(CodeRun.id)
            .join(Submission, Submission.id == CodeRun.submission_id)
            .where(Submission.phase_id == phase.id, waiting(CodeRun, utcnow()))
        ):
            enqueue_after_commit(session, RUN_CODE, run_id)
        return None
    queue = get_queue(session, user, competition, queue_name)
    session.add(PhaseQueue(phase_id=phase.id, queue_id=queue.id))
    session.flush()
    return queue


def queue_of_phase(session: Session, phase_id: int) -> WorkerQueue | None:
    query = (
        select(WorkerQueue)
        .join(PhaseQueue, PhaseQueue.queue_id == WorkerQueue.id)
        .where(PhaseQueue.phase_id == phase_id)
    )
    return session.scalar(query)


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


@dataclass(frozen=True)
class QueueView:
    name: str
    competition: str
    phases: tuple[str, ...]
    credentials: tuple[CredentialView, ...]
    #: Runs that wait for a worker of this queue, and since when the oldest waits.
    waiting: int
    oldest_waiting_since: datetime | None

    @property
    def live(self) -> bool:
        return any(c.live for c in self.credentials)


def describe(session: Session, queue: WorkerQueue, *, now: datetime | None = None) -> QueueView:
    now = now or utcnow()
    competition = session.get(Competition, queue.competition_id)
    assert competition is not None
    phases = session.execute(
        select(Task.slug, Phase.slug)
        .join(Phase, Phase.task_id == Task.id)
        .join(PhaseQueue, PhaseQueue.phase_id == Phase.id)
        .where(PhaseQueue.queue_id == queue.id)
        .order_by(Task.slug, Phase.slug)
    ).all()
    held = session.execute(
        select(CodeRun.worker, CodeRun.id).where(
            in_queue(queue.id),
            CodeRun.status == RunStatus.RUNNING,
            CodeRun.lease_expires_at >= now,
        )
    ).all()
    views = tuple(
        CredentialView(
            id=c.id,
            label=c.label,
            created_at=c.created_at,
            revoked_at=c.revoked_at,
            last_contact_at=c.last_contact_at,
            live=c.revoked_at is None and c.last_contact_at is not None and c.last_contact_at >= now - LIVE,
            running=tuple(sorted(run for worker, run in held if worker == worker_name(c.id))),
        )
        for c in credentials_of(session, queue)
    )
    count, oldest = session.execute(
        select(func.count(CodeRun.id), func.min(CodeRun.created_at)).where(
            in_queue(queue.id),
            waiting(CodeRun, now),
        )
    ).one()
    return QueueView(
        name=queue.name,
        competition=competition.slug,
        phases=tuple(f"{task}/{phase}" for task, phase in phases),
        credentials=views,
        waiting=int(count),
        oldest_waiting_since=oldest,
    )


def unserved(session: Session, competition_id: int, *, now: datetime | None = None) -> list[QueueView]:
    """The competition's queues where runs wait and no worker called lately (what its pages warn of)."""
    now = now or utcnow()
    queues = session.scalars(select(WorkerQueue).where(WorkerQueue.competition_id == competition_id))
    views = [describe(session, queue, now=now) for queue in queues]
    return [view for view in views if view.waiting and not view.live]
