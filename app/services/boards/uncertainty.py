"""A board's confidence intervals and neighbour comparisons, computed once per snapshot.

Each ranked entry's interval of the primary metric was stored beside its score when it was scored
(``app.services.scoring.steps.interval``); a score recorded before intervals were stored has none, and
its interval is computed here from the score's stored units with the same seed (so it is the one a
rescore would store), kept in memory and never written back: scores are immutable, and a rescore stores
one. Comparisons need the units of both neighbours, so they are computed here (``leaderboard.uncertainty``)
when a board is built, which the board cache keeps until something changes.

A score landing changes one or two neighbour pairs, not the board's thousand: the board cache's ``Kept``
(``app.services.boards.kept``) keeps each pair's test by its two scores (immutable, so the test cannot go
stale; the number of replicates is fixed, ``leaderboard.uncertainty.board_trials``), and each score's stored
interval once decoded, and a new board reads the units of only the entries whose pairs or intervals are not
kept. A first board reads the units ``WINDOW`` entries at a time along the board and lets them go, so the
memory it needs does not grow with the board (a pair's test is the same whether tested alone or among
others, ``leaderboard.significance.neighbour_tests``).

The seed is the phase's (``leaderboard.uncertainty.phase_seed``), the same as the scoring job's, so
every process and every reload gives the same numbers. Nothing is computed for a snapshot whose
viewers may not see the numbers (a hidden phase's public board has no entries), nor for a phase whose
bundle says ``intervals: false``.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.boards.kept import Kept
from app.services.boards.standings import ScoreName, score_names
from app.services.submissions.results import current_scores
from app.storage.models import Phase, Score, Submission
from leaderboard.bootstrap import Interval
from leaderboard.ranking import Entry
from leaderboard.significance import PairedTest, neighbour_tests
from leaderboard.uncertainty import (
    BoardUncertainty,
    board_trials,
    board_uncertainty,
    interval_for,
    stored_interval,
)
from scorers import Scorer
from scorers.split import PrivateBoard, board_units

log = logging.getLogger(__name__)

__all__ = ["WINDOW", "Kept", "of_board", "selected_from"]

#: Entries whose units a board reads at once (see the module docstring).
WINDOW = 200
#: Submissions one query names (a bound on the statement's parameters).
BATCH = 500


def of_board(
    session: Session,
    scorer: Scorer[Any, Any, Any],
    entries: Sequence[Entry],
    *,
    metric: str,
    seed: int,
    kept: Kept | None = None,
    private_board: PrivateBoard | None = None,
    names: Mapping[int, ScoreName] | None = None,
) -> BoardUncertainty[int] | None:
    """The intervals, comparisons and tied groups of ``entries`` (board order), keyed by submission id. With
    ``private_board`` (a revealed phase with a private split) over the private board's units: its private units
    or all units (``scorers.split.board_units``); the stored intervals are the public units', so none is used.
    ``names``: each submission's newest score, where the caller read them (``standings.candidates``)."""
    if not entries:
        return None
    memory = kept if kept is not None else Kept(0)
    ids = [e.candidate.submission_id for e in entries]
    if names is not None and all(sid in names for sid in ids):
        name = {sid: names[sid] for sid in ids}
    else:
        name = score_names(session, ids)
    which = private_board or "public"  # which units, in every key: a split's boards share no test or interval
    stored = _stored_intervals(session, name, metric, seed, which, memory, private_board is None)
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
    tested, fresh = 0, {}
    for first in range(0, max(1, len(ids) - 1), WINDOW):
        window = ids[first : first + WINDOW + 1]  # its pairs, and the entries of those pairs
        needed = {sid for sid in window if sid not in stored and sid in name}
        needed |= {sid for pair in itertools.pairwise(window) if pair not in known for sid in pair}
        if not needed:
            continue
        with_units = current_scores(session, needed, units=True)
        memory.count("units read", len(with_units))
        units = [(sid, _units(with_units[sid], private_board) if sid in with_units else None) for sid in window]
        tests = neighbour_tests(scorer, units, metric, trials=trials, seed=seed, known=known)
        for pair, test in zip(itertools.pairwise(window), tests, strict=True):
            if pair not in known:
                known[pair] = test
                tested += 1
                key = pair_key(*pair)
                if key is not None:
                    memory.put(key, test)
        for sid, stats in units:
            if sid in stored or not stats:
                continue
            interval = interval_for(scorer, stats, metric, seed=seed)
            if interval is not None:
                stored[sid] = fresh[sid] = interval
                memory.put(("interval", name[sid], metric, seed, which), interval)
        del with_units, units
    memory.count("pairs tested", tested)
    memory.count("intervals computed", len(fresh))
    board = board_uncertainty(
        scorer,
        [(sid, None) for sid in ids],
        metric,
        seed=seed,
        stored=stored,
        known_tests=known,
        selected=selected_from(session, entries),
    )
    if fresh:
        log.info("computed %d intervals of scores stored without one", len(fresh))
    return dataclasses.replace(board, computed=len(fresh), tested=tested, fresh=fresh)


def _stored_intervals(
    session: Session,
    name: dict[int, ScoreName],
    metric: str,
    seed: int,
    which: str,
    memory: Kept,
    public: bool,
) -> dict[int, Interval]:
    """The interval of each score: the one stored with it (the public units' only, read once and kept), else one
    computed before and kept."""
    stored: dict[int, Interval] = {}
    unread: dict[int, int] = {}
    for sid, score in name.items():
        if public:
            found, interval = memory.get(("stored interval", score, metric))
            if not found:
                unread[score[0]] = sid
                continue
            if interval is not None:
                stored[sid] = interval
                continue
        interval = memory.get(("interval", score, metric, seed, which))[1]
        if interval is not None:
            stored[sid] = interval
    todo = list(unread)
    for first in range(0, len(todo), BATCH):
        for row in session.execute(select(Score.id, Score.interval).where(Score.id.in_(todo[first : first + BATCH]))):
            sid = unread[row.id]
            interval = stored_interval(row.interval, metric)
            memory.put(("stored interval", name[sid], metric), interval)
            if interval is None:
                interval = memory.get(("interval", name[sid], metric, seed, which))[1]
            if interval is not None:
                stored[sid] = interval
    return stored


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
