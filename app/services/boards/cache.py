"""Leaderboards cached per phase and per class of viewer, dropped as soon as a result changes: the
one way pages, exports and the JSON API read a leaderboard.

Ranking a phase with thousands of submissions takes most of a second; serving the same bytes again
takes microseconds. The cache holds ``BoardSnapshot``s (``app.services.boards.snapshot``), each
computed once on a miss, with what pages, exports and the API derive from it made once per snapshot.
The application holds one cache (``AppState.boards``).

When a snapshot is stale (see ``app.services.boards.staleness``):

* A commit of this process changed what boards are computed from (a score landed, a choice, a
  reveal): at once, before the next request is answered. The generation is read before the
  snapshot's transaction starts, so a commit racing with the computation can only make the
  snapshot look older than it is, never newer.
* Another process wrote (a Celery worker of the distributed mode, a second web process, a
  command): within ``check_every`` seconds (2 by default), when the phase's fingerprint no longer
  matches. Checking costs one small query; only a real change costs a new ranking.
* Anything else: after ``max_age`` seconds (5 minutes by default).

Requests never wait for a check nor for another's rebuild: while one request checks a snapshot or
builds the next one (for whatever reason it is stale), every other request is served the snapshot
before it at once; only the first snapshot of a phase (nothing to serve yet) is waited for. The
request that found the change builds the next one itself, so a client reads its own writes. A
rebuild redoes only what changed: the numbers, tests and intervals of unchanged scores are kept
(``kept``, bounded, ``app.services.boards.kept``). Staleness never reveals anything early: a hidden
phase is only ever revealed, never hidden again.

Two classes of viewer share snapshots: the public (anyone who does not organize the competition)
and the competition's organizers, who also see a hidden phase's numbers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.accounts.access import is_organizer
from app.services.boards.kept import Kept
from app.services.boards.snapshot import BoardSnapshot, PhaseRef, Viewers, compute_snapshot
from app.services.boards.staleness import fingerprint, generation
from app.services.competitions import catalog
from app.services.errors import NotFound
from app.storage.db import Database
from app.storage.models import Competition, User


class BoardCache:
    """Snapshots keyed by phase (its slugs) and class of viewer; thread-safe, one computation per miss."""

    def __init__(self, db: Database, *, check_every: float = 2.0, max_age: float = 300.0) -> None:
        self.db = db
        self.check_every = check_every
        self.max_age = max_age
        self._snapshots: dict[tuple[PhaseRef, Viewers], BoardSnapshot] = {}
        self._locks: dict[tuple[PhaseRef, Viewers], threading.Lock] = {}
        self._guard = threading.Lock()
        #: Scores' numbers, neighbour comparisons and intervals of scores stored without one, that later
        #: boards reuse; its ``counts`` say how much was read and computed.
        self.kept = Kept()

    def viewers_of(self, session: Session, viewer: User | None, competition: str) -> Viewers:
        """The class of ``viewer`` in the competition (no query for anonymous viewers)."""
        if viewer is None:
            return "public"
        competition_id = session.scalar(select(Competition.id).where(Competition.slug == competition))
        if competition_id is None:
            raise NotFound(f"there is no competition {competition!r}")
        return "organizers" if is_organizer(session, viewer, competition_id) else "public"

    def _current(self, snapshot: BoardSnapshot | None) -> bool:
        """No commit of this process has changed anything since, and the snapshot is not too old."""
        return (
            snapshot is not None
            and snapshot.generation == generation.value
            and time.monotonic() - snapshot.made_at < self.max_age
        )

    def _fresh(self, snapshot: BoardSnapshot | None) -> bool:
        return (
            self._current(snapshot)
            and snapshot is not None
            and time.monotonic() - snapshot.checked_at < self.check_every
        )

    def peek(self, ref: PhaseRef, viewers: Viewers) -> BoardSnapshot | None:
        """The snapshot if it is fresh, else ``None``; never waits and never reads the database."""
        snapshot = self._snapshots.get((ref, viewers))
        return snapshot if self._fresh(snapshot) else None

    def get(self, ref: PhaseRef, viewers: Viewers) -> BoardSnapshot:
        """The phase's snapshot for this class of viewer, checked or recomputed when it is due.

        Concurrent misses of one key compute once. While one request checks or rebuilds a snapshot,
        the others are served the one before at once; they wait only when there is none yet.
        """
        key = (ref, viewers)
        snapshot = self._snapshots.get(key)
        if self._fresh(snapshot):
            assert snapshot is not None
            return snapshot
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        if snapshot is not None and not lock.acquire(blocking=False):
            return snapshot  # another request checks or rebuilds it: this one is served what it had before
        if snapshot is None:
            lock.acquire()
        try:
            snapshot = self._snapshots.get(key)
            if self._fresh(snapshot):
                assert snapshot is not None
                return snapshot
            at_start = generation.value
            with self.db.session(read_only=True) as session:
                unchanged = (
                    snapshot is not None
                    and self._current(snapshot)
                    and snapshot.generation == at_start
                    and fingerprint(session, snapshot.facts.id) == snapshot.fingerprint
                )
                if unchanged:
                    assert snapshot is not None
                    snapshot.checked_at = time.monotonic()
                    return snapshot
                try:
                    phase = catalog.get_phase(session, *ref)
                except NotFound:  # keep no lock for an address that names no phase
                    with self._guard:
                        if key not in self._snapshots:
                            self._locks.pop(key, None)
                    raise
                snapshot = compute_snapshot(session, phase, viewers, at_start, kept=self.kept)
            self._snapshots[key] = snapshot
            return snapshot
        finally:
            lock.release()

    def for_viewer(self, ref: PhaseRef, viewer: User | None) -> BoardSnapshot:
        """The snapshot ``viewer`` may see."""
        if viewer is None:
            return self.get(ref, "public")
        with self.db.session(read_only=True) as session:
            viewers = self.viewers_of(session, viewer, ref[0])
        return self.get(ref, viewers)

    def snapshots(self) -> Iterator[BoardSnapshot]:
        """Every snapshot held now (for tests and diagnostics)."""
        return iter(list(self._snapshots.values()))
