"""The private board of a phase with a private split, and each entrant's move from the public board ("shake-up").

A phase with ``private_share`` scores every submission on its public units (the score's ``metrics``, all that
participants see before the reveal) and keeps the private board's metrics apart (``Score.private_metrics``: its
private units, or all units, as ``private_board`` says; ``scorers.split``). Until the phase is revealed the board
everyone sees ranks the public metrics, and the private board is for its organizers only; once it is revealed, the
private board is the phase's ranking.

Which of an entrant's submissions the private board ranks is decided without looking at the private units, so a
team cannot win by trying many submissions on them:

* with ``final_submissions: N`` each team marks up to N submissions as final; the best of them on the private
  board counts. A team that marked none is represented by its N best submissions on the public board (``auto``;
  the page says so), and so is a baseline system;
* without it, the submission the phase's selection rule picks on the public board (its best, its latest, or
  the one it chose) is the one whose private score counts.

The ranking itself is ``leaderboard.ranking.rank`` over those submissions with their private metrics (the best
of each entrant's counted submissions, by the same metrics and ties as the public board). Its breakdown columns
(per language, per relation label) are the private board's too (``Score.private_columns``), never the public
units': a score recorded before they were kept shows none until it is rescored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from sqlalchemy.orm import Session

from app.services.submissions.results import current_scores
from leaderboard.ranking import BreakdownColumns, Candidate, EntrantKey, Entry, Rules, rank, select_per_team
from leaderboard.tables import Column, column_value, leaderboard_columns
from scorers.description import ScorerDescription

#: Which units a board ranks by: ``public`` before the reveal, the private board's after it.
RankedBy = Literal["public", "private", "all"]


@dataclass(frozen=True)
class PrivateScore:
    """A submission's numbers on the private board: its metrics and its breakdown columns."""

    metrics: Mapping[str, float] | None
    columns: BreakdownColumns


@dataclass(frozen=True)
class Move:
    """An entrant of the private board: its rank there, its rank on the public board (None: it had no public
    entry), and whether its counted submissions were picked for it (it marked no final submission)."""

    entry: Entry
    public_rank: int | None
    auto: bool = False

    @property
    def change(self) -> int | None:
        """Places gained from the public board to the private one (negative: places lost)."""
        return None if self.public_rank is None else self.public_rank - self.entry.rank


@dataclass(frozen=True)
class SplitBoard:
    """The private board beside the public one: ``moves`` in private rank order."""

    private_share: float
    ranked_by: Literal["private", "all"]
    revealed: bool
    final_submissions: int | None
    moves: tuple[Move, ...]

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(move.entry for move in self.moves)

    def breakdown_columns(self, description: ScorerDescription) -> tuple[Column, ...]:
        """The breakdown columns the board shows (the scorer's ``leaderboard_breakdowns``, as the public board)."""
        return tuple(c for c in leaderboard_columns(description, self.entries) if c.dimension is not None)

    @staticmethod
    def cell(move: Move, column: Column) -> str:
        return column.format(column_value(move.entry, column))

    def move_of(self, submission_id: int) -> Move | None:
        return next((m for m in self.moves if m.entry.candidate.submission_id == submission_id), None)


def _in_board_order(candidates: Sequence[Candidate], rules: Rules) -> list[Candidate]:
    """One entrant's rankable candidates, best first on their metrics (``rank`` with each as its own entrant)."""
    alone = [replace(c, team_id=f"{c.submission_id}", baseline=False) for c in candidates if c.rankable]
    order = [entry.candidate.submission_id for entry in rank(alone, replace(rules, select="best"))]
    by_id = {c.submission_id: c for c in candidates}
    return [by_id[sid] for sid in order]


def counted(
    candidates: Sequence[Candidate], rules: Rules, final_submissions: int | None
) -> dict[EntrantKey, tuple[list[Candidate], bool]]:
    """For each entrant, the submissions the private board ranks (judged on the public board only) and whether
    they were picked for it rather than marked by it."""
    if final_submissions is None:
        picked = select_per_team(candidates, rules)
        return {entrant: ([pick] if pick is not None else [], False) for entrant, (pick, _) in picked.items()}
    by_entrant: dict[EntrantKey, list[Candidate]] = {}
    for c in candidates:
        by_entrant.setdefault(c.entrant, []).append(c)
    out: dict[EntrantKey, tuple[list[Candidate], bool]] = {}
    for entrant, mine in by_entrant.items():
        marked = [c for c in mine if c.chosen and not c.baseline]
        if marked:
            out[entrant] = ([c for c in marked if c.rankable][:final_submissions], False)
        else:
            out[entrant] = (_in_board_order(mine, rules)[:final_submissions], True)
    return out


def split_board(
    candidates: Sequence[Candidate],
    private_scores: Mapping[int, PrivateScore],
    rules: Rules,
    *,
    private_share: float,
    ranked_by: Literal["private", "all"],
    revealed: bool,
    final_submissions: int | None,
) -> SplitBoard:
    """The private board of ``candidates`` (with their public numbers) given each submission's private ones."""
    public_rank = {e.candidate.entrant: e.rank for e in rank(candidates, rules)}
    chosen = counted(candidates, rules, final_submissions)
    private = [
        replace(c, metrics=score.metrics, columns=score.columns)  # the candidate's columns are the public units'
        for picks, _ in chosen.values()
        for c in picks
        if (score := private_scores.get(c.submission_id)) is not None and score.metrics is not None
    ]
    entries = rank(private, replace(rules, select="best"))
    moves = tuple(
        Move(entry, public_rank.get(entry.candidate.entrant), chosen[entry.candidate.entrant][1]) for entry in entries
    )
    return SplitBoard(private_share, ranked_by, revealed, final_submissions, moves)


def private_metrics(session: Session, submission_ids: Sequence[int]) -> dict[int, PrivateScore]:
    """The private board's metrics and breakdown columns of each submission's newest score."""
    return {
        sid: PrivateScore(score.private_metrics, score.private_columns or {})
        for sid, score in current_scores(session, submission_ids).items()
    }
