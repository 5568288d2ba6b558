"""A board's confidence intervals and neighbour comparisons, computed once per snapshot.

Each ranked entry's interval of the primary metric was stored beside its score when it was scored
(``app.services.scoring.steps.interval``); a score recorded before intervals were stored has none, and
its interval is computed here from the score's stored units with the same seed (so it is the one a
rescore would store), kept in memory and never written back: scores are immutable, and a rescore stores
one. Comparisons need the units of both neighbours, so they are computed here (``leaderboard.uncertainty``)
when a board is built, which the board cache keeps until something changes.

A score landing changes one or two neighbour pairs, not the board's thirty: ``Kept`` (held by the board
cache, ``AppState.boards``) keeps each pair's test by its two scores (immutable, so the test cannot go
stale), and a new board reads the units of only the entries whose pairs or intervals are not kept.

The seed is the phase's (``leaderboard.uncertainty.phase_seed``), the same as the scoring job's, so
every process and every reload gives the same numbers. Nothing is computed for a snapshot whose
viewers may not see the numbers (a hidden phase's public board has no entries), nor for a phase whose
bundle says ``intervals: false``.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.submissions.results import current_scores
from app.storage.models import Phase, Score, Submission
from leaderboard.bootstrap import Interval
from leaderboard.ranking import Entry
from leaderboard.significance import PairedTest
from leaderboard.uncertainty import BoardUncertainty, board_trials, board_uncertainty, stored_interval
from scorers import Scorer
from scorers.split import PrivateBoard, board_units

log = logging.getLogger(__name__)


class Kept:
    """Tests of neighbour pairs and intervals of scores stored without one, by what they depend on (an LRU).

    A score is named by its id and creation time, so that a row id used again after a deletion is another
    score. Thread-safe; ``size`` 0 keeps nothing.
    """

    def __init__(self, size: int = 50_000) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> tuple[bool, Any]:
        with self._lock:
            if key not in self._items:
                return False, None
            self._items.move_to_end(key)
            return True, self._items[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            if self.size <= 0:
                return
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


def of_board(
    session: Session,
    scorer: Scorer[Any, Any, Any],
    entries: Sequence[Entry],
    *,
    metric: str,
    seed: int,
    kept: Kept | None = None,
    private_board: PrivateBoard | None = None,
) -> BoardUncertainty[int] | None:
    """The intervals, comparisons and tied groups of ``entries`` (board order), keyed by submission id. With
    ``private_board`` (a revealed phase with a private split) over the private board's units: its private units
    or all units (``scorers.split.board_units``); the stored intervals are the public units', so none is used."""
    if not entries:
        return None
    memory = kept if kept is not None else Kept(0)
    ids = [e.candidate.submission_id for e in entries]
    scores = current_scores(session, ids)
    name = {sid: (score.id, score.created_at) for sid, score in scores.items()}
    stored: dict[int, Interval] = {}
    which = private_board or "public"  # which units, in every key: a split's boards share no test or interval
    for sid, score in scores.items():
        interval = stored_interval(score.interval, metric) if private_board is None else None
        if interval is None:
            interval = memory.get(("interval", name[sid], metric, seed, which))[1]
        if interval is not None:
            stored[sid] = interval
    trials = board_trials(max(0, len(ids) - 1))

    def pair_key(a: int, b: int) -> Hashable | None:
        if a not in name or b not in name:
            return None
        return ("test", name[a], name[b], metric, seed, trials, which)

    known: dict[tuple[int, int], PairedTest | None] = {}
    for a, b in itertools.pairwise(ids):
        key = pair_key(a, b)
        found, test = memory.get(key) if key is not None else (False, None)
        if found:
            known[(a, b)] = test
    needed = {sid for sid in ids if sid not in stored}
    needed |= {sid for pair in itertools.pairwise(ids) if pair not in known for sid in pair}
    with_units = current_scores(session, needed, units=True) if needed else {}
    pairs = [(sid, _units(with_units[sid], private_board) if sid in with_units else None) for sid in ids]
    board = board_uncertainty(
        scorer, pairs, metric, seed=seed, stored=stored, known_tests=known, selected=selected_from(session, entries)
    )
    for (a, b), test in board.tests.items():
        key = pair_key(a, b)
        if key is not None and (a, b) not in known:
            memory.put(key, test)
    for sid, interval in board.fresh.items():
        if sid not in stored and sid in name:
            memory.put(("interval", name[sid], metric, seed, which), interval)
    if board.computed:
        log.info("computed %d intervals of scores stored without one", board.computed)
    return board


def selected_from(session: Session, entries: Sequence[Entry]) -> dict[int, int]:
    """How many submissions each entry was picked from as its best on the same units: its scored submissions where
    the phase's selection is ``best`` (the board widens its interval and weighs its comparison for that choice,
    ``leaderboard.uncertainty``); nothing under ``latest`` or ``chosen``."""
    first = entries[0].candidate.submission_id
    query = select(Phase.selection).join(Submission, Submission.phase_id == Phase.id).where(Submission.id == first)
    if session.scalar(query) != "best":
        return {}
    return {e.candidate.submission_id: e.scored_submissions for e in entries if e.scored_submissions > 1}


def _units(score: Score, private_board: PrivateBoard | None) -> dict[str, Any]:
    """The units a board resamples of ``score``: the stored ones (the public units where the phase has a split),
    or the private board's."""
    if private_board is None:
        return score.units
    return board_units(score.units, score.private_units or {}, private_board)
