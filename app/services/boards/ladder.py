"""A ladder board (``board: ladder`` in the bundle): each team's public score as the Ladder shows it.

The Ladder (``leaderboard.ladder``, Blum & Hardt 2015) runs over each entrant's scored submissions in upload
order, on their stored units (the public units where the phase has a private split): a submission raises the
entrant's shown score only when it beats the last shown score by more than the standard error of their paired
difference; the shown score is then its primary metric rounded to 1/n (for a metric that is a fraction). Here the
board's candidates become what the ladder shows: a submission that raised keeps its numbers with the primary
metric replaced by the shown score, every other one is left off the board (no numbers), so the board ranks each
team by its last shown score and the chart of scores over time draws the ladder's steps.

What a team sees of its own submissions' numbers on a ladder phase is the board's alone
(``app.services.submissions.results``): a submission's page showing its exact score would answer every
question the ladder refuses to.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import replace
from typing import Any

from sqlalchemy.orm import Session

from app.services.boards.kept import Kept
from app.services.boards.standings import ScoreName, score_names
from app.services.submissions.results import current_scores
from app.storage.models import Phase
from leaderboard.ladder import climb
from leaderboard.ranking import Candidate, EntrantKey, Rules, utc
from scorers import ScorerDescription, get_scorer

LADDER = "ladder"


def on_ladder(
    session: Session,
    phase: Phase,
    candidates: list[Candidate],
    rules: Rules,
    description: ScorerDescription,
    kept: Kept | None = None,
    names: Mapping[int, ScoreName] | None = None,
) -> list[Candidate]:
    """``candidates`` as the ladder board shows them (see the module docstring); ``kept`` holds each entrant's climb
    by its scores, so that a board built again reads the units of the entrants that submitted since; ``names``: each
    submission's newest score, where the caller read them (``standings.candidates``)."""
    task = phase.task
    scorer = get_scorer(task.scorer, dict(task.scorer_options or {}))
    memory = kept if kept is not None else Kept(0)
    scored = [c for c in candidates if c.rankable]
    spec = description.metric(rules.primary)
    higher = rules.higher_is_better.get(rules.primary, True)
    fraction = spec is not None and spec.fraction
    by_entrant: dict[EntrantKey, list[Candidate]] = {}
    for candidate in sorted(scored, key=lambda c: (utc(c.submitted_at), c.submission_id)):
        by_entrant.setdefault(candidate.entrant, []).append(candidate)
    if names is None or any(c.submission_id not in names for c in scored):
        names = score_names(session, [c.submission_id for c in scored])
    shown: dict[int, float | None] = {}
    todo: dict[Hashable, list[Candidate]] = {}
    for entrant_candidates in by_entrant.values():
        # An entrant's climb depends only on its scores, in order: kept by them, it is redone when one is added.
        scores = tuple(names.get(c.submission_id) for c in entrant_candidates)
        key: Hashable = ("ladder", scores, rules.primary, higher, fraction)
        found, rungs = memory.get(key)
        if found:
            shown.update(rungs)
        else:
            todo[key] = entrant_candidates
    needed = [c.submission_id for entrant_candidates in todo.values() for c in entrant_candidates]
    stored = current_scores(session, needed, units=True) if needed else {}
    memory.count("units read", len(stored))
    units = {sid: score.units for sid, score in stored.items()}
    del stored
    for key, entrant_candidates in todo.items():
        rungs = climb(
            scorer,
            [(c.submission_id, units.get(c.submission_id) or None) for c in entrant_candidates],
            rules.primary,
            higher_is_better=higher,
            round_to_units=fraction,
        )
        raised = {rung.key: rung.shown for rung in rungs if rung.raised}
        memory.put(key, raised)
        shown.update(raised)
    return [_as_shown(c, shown, rules.primary) for c in candidates]


def _as_shown(candidate: Candidate, shown: dict[int, float | None], primary: str) -> Candidate:
    if not candidate.rankable:
        return candidate
    if candidate.submission_id not in shown:
        return replace(candidate, metrics=None)
    metrics: dict[str, Any] = dict(candidate.metrics or {})
    metrics[primary] = shown[candidate.submission_id]
    return replace(candidate, metrics=metrics)
