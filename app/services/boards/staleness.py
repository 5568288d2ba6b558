"""What tells a cached leaderboard that it may be stale.

* ``generation``: a process-wide counter, bumped when a session of this process commits a new score
  or a change to a submission, phase, task, competition or team (the listeners below see both the
  unit of work and bulk ``UPDATE`` statements). Scoring jobs of the embedded pool run in the server
  process, so a score they record bumps it as its transaction commits.
* ``fingerprint``: a few aggregates of one phase's rows that change whenever its leaderboard can
  (a new score, a failure, a new choice, a reveal, a new rule), read with one small query. It
  catches what another process wrote, which no listener here sees.

Changes neither catches (a team renamed directly in the database, say) are left to the cache's
``max_age``.
"""

from __future__ import annotations

import threading
from itertools import chain
from typing import Any

from sqlalchemy import case, event, func, select
from sqlalchemy.orm import ORMExecuteState, Session, UOWTransaction

from app.storage.models import Competition, Phase, Score, Submission, SubmissionStatus, Task, Team

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


def fingerprint(session: Session, phase_id: int) -> tuple[Any, ...]:
    """Aggregates of the phase's rows that change whenever its leaderboard may change."""
    submissions = session.execute(
        select(
            func.count(Submission.id),
            func.max(Submission.finished_at),
            func.sum(case((Submission.status == SubmissionStatus.FAILED, 1), else_=0)),
            func.sum(case((Submission.chosen, Submission.id), else_=0)),
        ).where(Submission.phase_id == phase_id)
    ).one()
    newest_score = session.scalar(
        select(func.max(Score.id))
        .join(Submission, Submission.id == Score.submission_id)
        .where(Submission.phase_id == phase_id)
    )
    phase = session.execute(
        select(
            Phase.revealed_at,
            Phase.visibility,
            Phase.selection,
            Phase.frozen_at,
            Phase.final_submissions,
            Phase.board,
            Phase.boards,
        ).where(Phase.id == phase_id)
    ).one_or_none()
    return (*submissions, newest_score, *(phase or ()))
