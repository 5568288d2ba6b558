"""A phase's further boards (``boards`` in its bundle) as pages, CSV and JSON, from the phase's snapshot.

Each board re-ranks the main board's entries (each team's counting submission) by its own metrics, slice and
ranking (``leaderboard.multi``); what a viewer may see is the snapshot's (nothing of a hidden phase), and each
product is made once per snapshot.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.services.boards.snapshot import BoardSnapshot
from app.services.boards.uncertainty import selected_from
from app.services.competitions.catalog import get_phase
from app.services.errors import NotFound
from app.services.submissions.results import current_scores
from leaderboard.exports import iso_utc, safe_cell
from leaderboard.multi import BoardRow, BoardSpec, rank_board
from leaderboard.paper import interval_words, render_latex, render_markdown
from leaderboard.rank_uncertainty import rank_uncertainty
from leaderboard.tables import Column, metric_column
from leaderboard.uncertainty import BoardUncertainty, board_uncertainty, interval_view, phase_seed
from scorers import get_scorer
from scorers.split import board_units

RANKING_WORDS = {
    "metric": "ranked by {by}",
    "mean_of_ranks": "ranked by the mean of its ranks on {metrics} (fractional ranks: ties share the mean place)",
    "rank_of_ranks": "ranked by the mean of its ranks on {metrics} (competition ranks: ties share the best place)",
}


@dataclass(frozen=True)
class FurtherBoard:
    spec: BoardSpec
    rows: tuple[BoardRow, ...]
    columns: tuple[Column, ...]
    #: Each entry's interval on the board's units, the comparisons of neighbours and the tied groups: of the
    #: metric it ranks by (``leaderboard.uncertainty``), or of the mean rank (``leaderboard.rank_uncertainty``);
    #: None where the phase shows no intervals or no unit can be resampled.
    uncertainty: BoardUncertainty[int] | None = None

    def interval_text(self, row: BoardRow) -> str:
        interval = self.uncertainty.intervals.get(row.entry.candidate.submission_id) if self.uncertainty else None
        if interval is None:
            return "–"
        mark = "" if interval.reliable else " †"
        if self.by_ranks:  # mean ranks: the replicates' own values, two decimals as the mean rank shows
            if interval.zero_width:
                return "zero width" + mark
            return f"{interval.low:.2f}–{interval.high:.2f}{mark}"
        column = next(c for c in self.columns if c.metric == self.spec.ranked_by)
        return interval_words(interval, column) + mark

    @property
    def interval_note(self) -> str:
        """What the interval column is, in words (under the table and the paper's table)."""
        if self.by_ranks:
            return (
                "95% interval of the mean rank: percentile bootstrap over the board's documents, every metric and "
                "rank recomputed on each resample; † not a 95% interval (rough, zero width)."
            )
        return (
            "95% interval: bootstrap over the board's documents (BCa, widened for small samples); "
            "† not a 95% interval (rough, zero width, a stratum too small)."
        )

    @property
    def group_note(self) -> str:
        """What the tied groups are, or why there are none."""
        if self.uncertainty is None or not self.uncertainty.comparable:
            return "Too few documents to compare entries: no tied groups (which does not mean tied)."
        test = (
            "paired bootstrap of the difference of their mean ranks on the same resamples"
            if self.by_ranks
            else "paired bootstrap test of equal means"
        )
        return f"Entries of one tied group cannot be told apart (each compared with the next: {test}, Holm-corrected)."

    def group(self, row: BoardRow) -> int | None:
        return self.uncertainty.group_of(row.entry.candidate.submission_id) if self.uncertainty else None

    @property
    def by_ranks(self) -> bool:
        return self.spec.ranking != "metric"

    @property
    def words(self) -> str:
        """How the board ranks and what it shows, in words."""
        spec = self.spec
        labels = [c.label for c in self.columns]
        text = RANKING_WORDS[spec.ranking].format(
            by=next((c.label for c in self.columns if c.metric == spec.ranked_by), spec.ranked_by),
            metrics=", ".join(labels),
        )
        where = f"on the {spec.slice[0]} {spec.slice[1]}" if spec.slice else "on all units"
        return f"Each team's entry on the main board, {where}, {text}."

    def cells(self, row: BoardRow) -> list[str]:
        return [c.format(row.values.get(c.metric)) for c in self.columns]


def specs(snapshot: BoardSnapshot) -> tuple[BoardSpec, ...]:
    return tuple(BoardSpec.from_dict(b) for b in snapshot.facts.boards)


def further_board(
    snapshot: BoardSnapshot, name: str, session_factory: Callable[[], Session] | None = None
) -> FurtherBoard:
    """The board ``name`` of the snapshot's phase, ranked (NotFound for a board it does not have); with
    ``session_factory``, its intervals and tied groups on its units: of the metric it ranks by, or, for a board
    ranked by ranks, of each entry's mean rank (``leaderboard.rank_uncertainty``)."""
    spec = next((s for s in specs(snapshot) if s.name == name), None)
    if spec is None:
        raise NotFound(f"this phase has no board {name!r}")
    directions = {m.name: m.higher_is_better for m in snapshot.description.metrics}
    rows = tuple(rank_board(spec, snapshot.entries, directions))
    columns = tuple(metric_column(snapshot.description, m) for m in spec.metrics)
    uncertain = None
    if session_factory is not None and snapshot.facts.intervals and rows:
        uncertain = _uncertainty(snapshot, spec, rows, directions, session_factory)
    return FurtherBoard(spec, rows, columns, uncertain)


def _uncertainty(
    snapshot: BoardSnapshot,
    spec: BoardSpec,
    rows: tuple[BoardRow, ...],
    directions: dict[str, bool],
    session_factory: Callable[[], Session],
) -> BoardUncertainty[int] | None:
    """The board's intervals and comparisons on its units: all of them, or those of its slice (a unit whose
    statistics carry the slice's dimension with its key); none where no unit does. Once a phase with a private
    split is revealed, its entries' numbers are the private board's, and so are the units resampled."""
    ids = [row.entry.candidate.submission_id for row in rows]
    with session_factory() as session:
        task = get_phase(session, *snapshot.facts.ref).task
        scorer = get_scorer(task.scorer, dict(task.scorer_options or {}))
        scores = current_scores(session, ids, units=True)
        ranked_by = snapshot.facts.ranked_by  # a revealed phase with a split: the private board's units
        stored = {
            sid: s.units if ranked_by == "public" else board_units(s.units, s.private_units or {}, ranked_by)
            for sid, s in scores.items()
        }
        selected = selected_from(session, [row.entry for row in rows])  # the main board's choice, weighed alike
    entries = []
    for sid in ids:
        units = stored.get(sid) or {}
        if spec.slice is not None:
            dimension, key = spec.slice
            units = {u: stats for u, stats in units.items() if str(stats.get(dimension)) == key}
        entries.append((sid, units or None))
    if not any(units for _, units in entries):
        return None
    seed = phase_seed(*snapshot.facts.ref)
    if spec.ranking != "metric":
        method = "average" if spec.ranking == "mean_of_ranks" else "min"
        ranked = [
            (sid, float(row.score or 0.0), row.values, units) for row, (sid, units) in zip(rows, entries, strict=True)
        ]
        return rank_uncertainty(scorer, ranked, spec.metrics, directions, method, seed=seed)
    return board_uncertainty(scorer, entries, spec.ranked_by, seed=seed, selected=selected)


def paper(board: FurtherBoard, extension: str, caption: str) -> bytes:
    """The board as a paper's table, LaTeX (booktabs) or Markdown (``leaderboard.paper``): the numbers as the page
    shows them, the interval and the tied groups (a rule between groups in LaTeX) where it has them."""
    header = ["#", "Team", "System"]
    if board.by_ranks:
        header.append("Mean rank")
    header += [c.label + (" (rank)" if board.by_ranks else "") for c in board.columns]
    grouped = board.uncertainty is not None and board.uncertainty.comparable
    if board.uncertainty is not None:
        header.append("95% CI")
    if grouped:
        header.append("Group")
    rows: list[list[str]] = []
    starts: list[bool] = []
    previous: int | None = None
    for row in board.rows:
        c = row.entry.candidate
        cells = [str(row.rank), c.team + (" *" if c.baseline else ""), c.system]
        if board.by_ranks:
            cells.append(f"{row.score:.2f}" if row.score is not None else "–")
        for column, text in zip(board.columns, board.cells(row), strict=True):
            cells.append(text + (f" ({row.ranks[column.metric]:g})" if board.by_ranks else ""))
        if board.uncertainty is not None:
            cells.append(board.interval_text(row))
        group = board.group(row)
        if grouped:
            cells.append(str(group) if group is not None else "–")
        starts.append(bool(rows) and grouped and group != previous)
        previous = group
        rows.append(cells)
    notes = [board.words]
    if board.uncertainty is not None:
        notes += [board.interval_note, board.group_note]
    if any(r.entry.candidate.baseline for r in board.rows):
        notes.append("* a baseline run by the organizers.")
    text = (
        render_latex(header, rows, starts, notes, caption=caption)
        if extension == "tex"
        else render_markdown(header, rows, notes, caption=caption)
    )
    return text.encode("utf-8")


def export(board: FurtherBoard, extension: str) -> bytes:
    """The board as CSV or JSON: raw numbers (fractions), each metric's rank where it ranks by ranks."""
    spec = board.spec
    if extension == "json":
        names = {row.entry.candidate.submission_id: row.entry.candidate.team for row in board.rows}
        document: dict[str, Any] = {
            "board": spec.to_dict(),
            "columns": [{"key": c.metric, "title": c.header, "label": c.label} for c in board.columns],
            "entries": [_entry(board, row) for row in board.rows],
            "interval_of": None if board.uncertainty is None else board.uncertainty.metric,
            "too_few_units": board.uncertainty is not None and not board.uncertainty.comparable,
            "comparisons": [
                {**c.to_dict(), "better_team": names.get(c.better), "worse_team": names.get(c.worse)}
                for c in (board.uncertainty.comparisons if board.uncertainty else ())
            ],
        }
        return (json.dumps(document, ensure_ascii=False, allow_nan=False, indent=2) + "\n").encode("utf-8")
    titles = [c.header for c in board.columns]  # the metrics' titles where the scorer declares them
    header = ["rank", "team", "system", "submitted_at", "baseline", "score", *titles]
    if board.by_ranks:
        header += [f"rank:{t}" for t in titles]
    if board.uncertainty is not None:
        header += ["interval_low", "interval_high", "interval_label", "tied_group"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([safe_cell(h) for h in header])
    for row in board.rows:
        c = row.entry.candidate
        cells = [str(row.rank), safe_cell(c.team), safe_cell(c.system), iso_utc(c.submitted_at)]
        cells += ["true" if c.baseline else "false", _number(row.score)]
        cells += [_number(row.values.get(m)) for m in spec.metrics]
        if board.by_ranks:
            cells += [_number(row.ranks.get(m)) for m in spec.metrics]
        if board.uncertainty is not None:
            interval = board.uncertainty.intervals.get(c.submission_id)
            cells += [_number(interval.low), _number(interval.high), interval.label] if interval else ["", "", ""]
            cells.append(str(board.group(row) or ""))
        writer.writerow(cells)
    return buffer.getvalue().encode("utf-8")


def _entry(board: FurtherBoard, row: BoardRow) -> dict[str, Any]:
    c = row.entry.candidate
    return {
        "rank": row.rank,
        "team": c.team,
        "system": c.system,
        "submitted_at": iso_utc(c.submitted_at),
        "baseline": c.baseline,
        "submission_id": c.submission_id,
        "score": row.score,
        "values": dict(row.values),
        "ranks": dict(row.ranks) if board.by_ranks else None,
        "interval": _interval(board, row),
        "tied_group": board.group(row),
    }


def _interval(board: FurtherBoard, row: BoardRow) -> dict[str, Any] | None:
    interval = board.uncertainty.intervals.get(row.entry.candidate.submission_id) if board.uncertainty else None
    return None if interval is None else interval_view(interval)


def _number(value: float | None) -> str:
    return "" if value is None else repr(value)
