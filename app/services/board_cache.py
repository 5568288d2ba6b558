"""Leaderboards cached per phase and per class of viewer, dropped as soon as a result changes.

Ranking a phase with thousands of submissions takes tens of milliseconds; serving the same bytes
again takes microseconds. A ``BoardSnapshot`` is what ``app.services.leaderboards`` computes (the
candidates, ranked with the phase's rules, numbers only where the viewer may see them), plus what
pages and exports derive from it (JSON, CSV, a chart), each made once per snapshot.

When a snapshot is stale:

* In this process, at once: every session that writes a score, or changes a submission, phase,
  task, competition or team, bumps a process-wide generation when it commits (the listeners below;
  scoring jobs of the embedded pool run in the server process, so a score that lands invalidates
  every snapshot before the next request). A snapshot made at an older generation is recomputed.
  The generation is read before the snapshot's transaction starts, so a commit racing with the
  computation can only make the snapshot look older than it is, never newer.
* Written by another process (a second web process, a command): after ``max_age`` seconds at
  most. That is the only staleness there is, and it never reveals anything early: a hidden phase
  is only ever revealed, never hidden again, so a stale public snapshot hides more, not less.

Two classes of viewer share snapshots: the public (anyone who does not organize the competition)
and the competition's organizers, who also see a hidden phase's numbers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from typing import Any, Literal, cast

from sqlalchemy import event, select
from sqlalchemy.orm import ORMExecuteState, Session, UOWTransaction

from app.services import competitions, leaderboards
from app.services.access import is_organizer
from app.services.errors import NotFound
from app.storage.db import Database
from app.storage.models import Competition, Phase, Score, Submission, Task, Team, User
from leaderboard.ranking import Candidate, Entry, Rules, Selection, rank
from scorers import scorer_class

PhaseRef = tuple[str, str, str]
Viewers = Literal["public", "organizers"]

# -- the generation: bumped by every commit that may change a leaderboard ---------------------------

_WATCHED: tuple[type[Any], ...] = (Score, Submission, Phase, Task, Competition, Team)
_DIRTY = "podium_boards_dirty"


class _Generation:
    """A process-wide counter; thread-safe."""

    def __init__(self) -> None:
        self._value = 0
        self._lock = threading.Lock()

    @property
    def value(self) -> int:
        return self._value

    def bump(self) -> None:
        with self._lock:
            self._value += 1


generation = _Generation()


def _changes_boards(obj: object, *, new: bool) -> bool:
    # A new submission is queued and unranked, and a new team has no submission: neither changes a
    # board. A new score does, and so does any change to the rows a board is computed from.
    if isinstance(obj, Score):
        return True
    return isinstance(obj, _WATCHED) and not new


@event.listens_for(Session, "after_flush")
def _note_flush(session: Session, flush_context: UOWTransaction) -> None:
    new = (obj for obj in session.new if _changes_boards(obj, new=True))
    changed = (obj for obj in chain(session.dirty, session.deleted) if _changes_boards(obj, new=False))
    if next(chain(new, changed), None) is not None:
        session.info[_DIRTY] = True


@event.listens_for(Session, "do_orm_execute")
def _note_statement(state: ORMExecuteState) -> None:
    # Bulk statements (``session.execute(update(Submission)...)``) do not go through the flush.
    if not (state.is_update or state.is_delete or state.is_insert):
        return
    mapper = state.bind_mapper
    if mapper is not None and issubclass(mapper.class_, _WATCHED):
        state.session.info[_DIRTY] = True


@event.listens_for(Session, "after_commit")
def _bump_on_commit(session: Session) -> None:
    if session.in_nested_transaction():  # a savepoint was released; the real commit comes later
        return
    if session.info.pop(_DIRTY, False):
        generation.bump()


@event.listens_for(Session, "after_rollback")
def _forget_on_rollback(session: Session) -> None:
    if not session.in_nested_transaction():
        session.info.pop(_DIRTY, None)


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
        """upcoming, open or closed at ``now`` (``competitions.phase_state`` reads only the two times)."""
        return competitions.phase_state(cast(Phase, self), now)

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
    made_at: float
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

    def entry_for(self, submission_id: int) -> Entry | None:
        """The entry whose counting submission this is, if any."""
        return next((e for e in self.entries if e.candidate.submission_id == submission_id), None)


def compute_snapshot(session: Session, phase: Phase, viewers: Viewers, generation_at_start: int) -> BoardSnapshot:
    """Rank the phase as ``viewers`` see it (the numbers and rules of ``app.services.leaderboards``)."""
    described = scorer_class(phase.task.scorer).describe()
    rules = Rules.from_description(described, select=cast(Selection, phase.selection))
    hidden = viewers == "public" and not phase.metrics_public
    found: list[Candidate] = []
    if not hidden:
        breakdowns = tuple(described.get("leaderboard_breakdowns", ()))
        found = leaderboards.candidates(session, phase, with_columns=breakdowns)
    return BoardSnapshot(
        facts=PhaseFacts.of(phase),
        viewers=viewers,
        hidden=hidden,
        description=described,
        rules=rules,
        entries=tuple(rank(found, rules)),
        candidates=tuple(c for c in found if c.rankable),
        generation=generation_at_start,
        made_at=time.monotonic(),
    )


class BoardCache:
    """Snapshots keyed by phase (its slugs) and class of viewer; thread-safe, one computation per miss."""

    def __init__(self, db: Database, *, max_age: float = 5.0) -> None:
        self.db = db
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

    def _fresh(self, snapshot: BoardSnapshot | None) -> bool:
        return (
            snapshot is not None
            and snapshot.generation == generation.value
            and time.monotonic() - snapshot.made_at < self.max_age
        )

    def get(self, ref: PhaseRef, viewers: Viewers) -> BoardSnapshot:
        """The phase's snapshot for this class of viewer, recomputed if it is stale."""
        key = (ref, viewers)
        snapshot = self._snapshots.get(key)
        if self._fresh(snapshot):
            assert snapshot is not None
            return snapshot
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # concurrent misses of one key compute once; the others take its result
            snapshot = self._snapshots.get(key)
            if self._fresh(snapshot):
                assert snapshot is not None
                return snapshot
            at_start = generation.value
            with self.db.session(read_only=True) as session:
                phase = competitions.get_phase(session, *ref)
                snapshot = compute_snapshot(session, phase, viewers, at_start)
            self._snapshots[key] = snapshot
            return snapshot

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
