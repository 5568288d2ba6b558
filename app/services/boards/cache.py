"""Leaderboards cached per phase and per class of viewer, dropped as soon as a result changes.

Ranking a phase with thousands of submissions takes most of a second; serving the same bytes again
takes microseconds. A ``BoardSnapshot`` is what ``app.services.boards.standings`` computes (the
candidates, ranked with the phase's rules, numbers only where the viewer may see them), plus what
pages and exports derive from it (JSON, CSV, a chart), each made once per snapshot.

When a snapshot is stale (see ``app.services.boards.staleness``):

* A commit of this process changed what boards are computed from (a score landed, a choice, a
  reveal): at once, before the next request is answered. The generation is read before the
  snapshot's transaction starts, so a commit racing with the computation can only make the
  snapshot look older than it is, never newer.
* Another process wrote (a Celery worker of the distributed mode, a second web process, a
  command): within ``check_every`` seconds (2 by default), when the phase's fingerprint no longer
  matches. Checking costs one small query; only a real change costs a new ranking.
* Anything else: after ``max_age`` seconds (5 minutes by default).

Requests never wait for a check: while one request checks or refreshes a snapshot that is only
old, the others are served the snapshot they would have had a moment before. Staleness never
reveals anything early: a hidden phase is only ever revealed, never hidden again.

Two classes of viewer share snapshots: the public (anyone who does not organize the competition)
and the competition's organizers, who also see a hidden phase's numbers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.accounts.access import is_organizer
from app.services.boards import standings
from app.services.boards.staleness import fingerprint, generation
from app.services.competitions import catalog
from app.services.errors import NotFound
from app.storage.db import Database
from app.storage.models import Competition, Phase, User
from leaderboard.ranking import Candidate, Entry, Rules, Selection, rank
from scorers import scorer_class

PhaseRef = tuple[str, str, str]
Viewers = Literal["public", "organizers"]

# -- snapshots ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PhaseFacts:
    """The phase as a leaderboard page shows it, as plain values (usable after the session closed)."""

    id: int
    competition_id: int
    competition: str
    competition_title: str
    task: str
    task_title: str
    phase: str
    phase_title: str
    description: str
    selection: str
    visibility: str
    revealed_at: datetime | None
    starts_at: datetime | None
    ends_at: datetime | None

    @property
    def ref(self) -> PhaseRef:
        return (self.competition, self.task, self.phase)

    @property
    def metrics_public(self) -> bool:
        return self.visibility == "public" or self.revealed_at is not None

    def state(self, now: datetime) -> str:
        """upcoming, open or closed at ``now`` (``catalog.phase_state`` reads only the two times)."""
        return catalog.phase_state(cast(Phase, self), now)

    @classmethod
    def of(cls, phase: Phase) -> PhaseFacts:
        task = phase.task
        competition = task.competition
        return cls(
            id=phase.id,
            competition_id=competition.id,
            competition=competition.slug,
            competition_title=competition.title,
            task=task.slug,
            task_title=task.title,
            phase=phase.slug,
            phase_title=phase.title,
            description=phase.description,
            selection=phase.selection,
            visibility=phase.visibility,
            revealed_at=phase.revealed_at,
            starts_at=phase.starts_at,
            ends_at=phase.ends_at,
        )


@dataclass
class BoardSnapshot:
    """A phase's ranked leaderboard as one class of viewer sees it, at one generation."""

    facts: PhaseFacts
    viewers: Viewers
    #: ``True`` when this class of viewer may not see the phase's numbers (then nothing is ranked).
    hidden: bool
    description: dict[str, Any]
    rules: Rules
    entries: tuple[Entry, ...]
    #: Every candidate with numbers this class may see (the chart of scores over time uses them).
    candidates: tuple[Candidate, ...]
    generation: int
    #: ``board_changes.fingerprint`` of the phase, read before the candidates.
    fingerprint: tuple[Any, ...]
    made_at: float
    #: When the fingerprint was last found unchanged (``time.monotonic()``).
    checked_at: float
    _derived: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def derived(self, name: str, build: Callable[[], Any]) -> Any:
        """``build()``, made once per snapshot (an export's bytes, a chart, a rendered table)."""
        try:
            return self._derived[name]
        except KeyError:
            pass
        with self._lock:
            if name not in self._derived:
                self._derived[name] = build()
            return self._derived[name]

    def peek(self, name: str) -> Any | None:
        """What ``derived`` made under ``name``, or ``None`` if it was not made yet."""
        return self._derived.get(name)

    def entry_for(self, submission_id: int) -> Entry | None:
        """The entry whose counting submission this is, if any."""
        return next((e for e in self.entries if e.candidate.submission_id == submission_id), None)


def compute_snapshot(session: Session, phase: Phase, viewers: Viewers, generation_at_start: int) -> BoardSnapshot:
    """Rank the phase as ``viewers`` see it (the numbers and rules of ``app.services.boards.standings``)."""
    seen = fingerprint(session, phase.id)
    described = scorer_class(phase.task.scorer).describe()
    rules = Rules.from_description(described, select=cast(Selection, phase.selection))
    hidden = viewers == "public" and not phase.metrics_public
    now = time.monotonic()
    found: list[Candidate] = []
    if not hidden:
        breakdowns = tuple(described.get("leaderboard_breakdowns", ()))
        found = standings.candidates(session, phase, with_columns=breakdowns)
    return BoardSnapshot(
        facts=PhaseFacts.of(phase),
        viewers=viewers,
        hidden=hidden,
        description=described,
        rules=rules,
        entries=tuple(rank(found, rules)),
        candidates=tuple(c for c in found if c.rankable),
        generation=generation_at_start,
        fingerprint=seen,
        made_at=now,
        checked_at=now,
    )


class BoardCache:
    """Snapshots keyed by phase (its slugs) and class of viewer; thread-safe, one computation per miss."""

    def __init__(self, db: Database, *, check_every: float = 2.0, max_age: float = 300.0) -> None:
        self.db = db
        self.check_every = check_every
        self.max_age = max_age
        self._snapshots: dict[tuple[PhaseRef, Viewers], BoardSnapshot] = {}
        self._locks: dict[tuple[PhaseRef, Viewers], threading.Lock] = {}
        self._guard = threading.Lock()

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

        Concurrent misses of one key compute once; the others wait for that result. A snapshot due
        for a check (nothing changed in this process) is still served to the others while one
        request checks it.
        """
        key = (ref, viewers)
        snapshot = self._snapshots.get(key)
        if self._fresh(snapshot):
            assert snapshot is not None
            return snapshot
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        due_for_check = self._current(snapshot)
        if due_for_check and not lock.acquire(blocking=False):
            assert snapshot is not None
            return snapshot
        if not due_for_check:
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
                phase = catalog.get_phase(session, *ref)
                snapshot = compute_snapshot(session, phase, viewers, at_start)
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

    def api_leaderboard(self, session: Session, viewer: User | None, phase: Phase) -> dict[str, Any]:
        """``standings.leaderboard(session, viewer, phase)``, computed once per snapshot: what the
        JSON API answers is the same for every viewer of one class."""
        task = phase.task
        ref = (task.competition.slug, task.slug, phase.slug)
        snapshot = self.get(ref, self.viewers_of(session, viewer, ref[0]))
        board: dict[str, Any] = snapshot.derived("api", lambda: standings.leaderboard(session, viewer, phase))
        return board

    def snapshots(self) -> Iterator[BoardSnapshot]:
        """Every snapshot held now (for tests and diagnostics)."""
        return iter(list(self._snapshots.values()))
