"""A board's confidence intervals and neighbour comparisons, computed once per snapshot.

Each ranked entry's interval of the primary metric was stored beside its score when it was scored
(``app.services.scoring.steps.interval``); a score recorded before intervals were stored has none, and
its interval is computed here from the score's stored units with the same seed (so it is the one a
rescore would store), held with the snapshot and never written back: scores are immutable, and a
rescore stores one. Comparisons need the units of both neighbours, so they are computed here on every
new snapshot (``leaderboard.uncertainty``), which the board cache keeps until a score lands.

The seed is the phase's (``leaderboard.uncertainty.phase_seed``), the same as the scoring job's, so
every process and every reload gives the same numbers. Nothing is computed for a snapshot whose
viewers may not see the numbers (a hidden phase's public board has no entries), nor for a phase whose
bundle says ``intervals: false``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy.orm import Session

from app.services.submissions.results import current_scores
from leaderboard.bootstrap import Interval
from leaderboard.ranking import Entry
from leaderboard.uncertainty import BoardUncertainty, board_uncertainty, stored_interval
from scorers import Scorer

log = logging.getLogger(__name__)


def of_board(
    session: Session, scorer: Scorer[object, object, object], entries: Sequence[Entry], *, metric: str, seed: int
) -> BoardUncertainty[int] | None:
    """The intervals, comparisons and tied groups of ``entries`` (board order), keyed by submission id."""
    if not entries:
        return None
    ids = [e.candidate.submission_id for e in entries]
    scores = current_scores(session, ids, units=True)
    stored: dict[int, Interval] = {}
    for sid, score in scores.items():
        interval = stored_interval(score.interval, metric)
        if interval is not None:
            stored[sid] = interval
    pairs = [(sid, scores[sid].units if sid in scores else None) for sid in ids]
    board = board_uncertainty(scorer, pairs, metric, seed=seed, stored=stored)
    if board.computed:
        log.info("computed %d intervals of scores stored without one", board.computed)
    return board
