"""What the leaderboard page, its exports and its chart make of a ``BoardSnapshot``.

The routes keep each product with its snapshot (``BoardSnapshot.derived``), so serving a popular
leaderboard again costs a dictionary lookup until a score lands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from app.services.boards.snapshot import BoardSnapshot
from app.services.submissions.results import current_scores
from app.storage.types import utcnow
from leaderboard.exports import documents_csv, documents_json, leaderboard_csv, leaderboard_json
from leaderboard.tables import Column, leaderboard_table
from scorers import ScorerDescription


@dataclass(frozen=True)
class HeaderCell:
    label: str
    title: str
    primary: bool
    breakdown: bool


@dataclass(frozen=True)
class RowView:
    rank: int
    team: str
    system: str
    baseline: bool
    submitted_at: datetime
    submission_id: int
    scored_submissions: int
    cells: tuple[str, ...]


@dataclass(frozen=True)
class BoardView:
    headers: tuple[HeaderCell, ...]
    rows: tuple[RowView, ...]
    primary_label: str


def _column_order(columns: tuple[Column, ...], description: ScorerDescription) -> list[int]:
    """The primary metric first, then the secondary ones, the other metrics, the per-language (or
    other breakdown) columns last, each group in the library's order."""
    primary = description.primary_metric
    secondary = list(description.secondary_metrics)

    def rank_of(index: int) -> tuple[int, int]:
        column = columns[index]
        if column.dimension is not None:
            return (3, index)
        if column.metric == primary:
            return (0, index)
        if column.metric in secondary:
            return (1, secondary.index(column.metric))
        return (2, index)

    return sorted(range(len(columns)), key=rank_of)


def _title(column: Column) -> str:
    direction = {True: "higher is better", False: "lower is better", None: ""}[column.higher_is_better]
    parts = [column.meaning, direction]
    if column.dimension is not None:
        parts.insert(0, f"{column.dimension} {column.key}")
    return "; ".join(p for p in parts if p)


def board_view(snapshot: BoardSnapshot) -> BoardView:
    board = leaderboard_table(snapshot.description, snapshot.entries)
    order = _column_order(board.columns, snapshot.description)
    primary = snapshot.description.primary_metric
    headers = tuple(
        HeaderCell(
            label=board.columns[i].label,
            title=_title(board.columns[i]),
            primary=board.columns[i].dimension is None and board.columns[i].metric == primary,
            breakdown=board.columns[i].dimension is not None,
        )
        for i in order
    )
    rows = tuple(
        RowView(
            rank=row.rank,
            team=row.team,
            system=row.system,
            baseline=row.baseline,
            submitted_at=row.submitted_at,
            submission_id=row.submission_id,
            scored_submissions=row.scored_submissions,
            cells=tuple(row.cells[i] for i in order),
        )
        for row in board.rows
    )
    primary_label = next((h.label for h in headers if h.primary), primary)
    return BoardView(headers, rows, primary_label)


# -- exports --------------------------------------------------------------------------------------------


def export_name(snapshot: BoardSnapshot, what: str, extension: str) -> str:
    competition, task, phase = snapshot.facts.ref
    return f"{competition}-{task}-{phase}-{what}.{extension}"


def board_export(snapshot: BoardSnapshot, extension: str) -> bytes:
    """The leaderboard as CSV or JSON (the ``leaderboard.exports`` formats), UTF-8."""
    write = leaderboard_csv if extension == "csv" else leaderboard_json
    return write(snapshot.description, snapshot.entries).encode("utf-8")


def document_dimension(description: ScorerDescription) -> str:
    """The breakdown with one row per scored unit: the scorer's unit (document, group, instance)."""
    return description.unit or "document"


def documents_export(snapshot: BoardSnapshot, extension: str, session_factory: Callable[[], Session]) -> bytes:
    """Every entry's per-document (per-unit) scores as CSV or JSON, from the stored breakdowns."""
    ids = [e.candidate.submission_id for e in snapshot.entries]
    with session_factory() as session:
        breakdowns = {sid: score.breakdown for sid, score in current_scores(session, ids, full=True).items()}
    write = documents_csv if extension == "csv" else documents_json
    dimension = document_dimension(snapshot.description)
    return write(snapshot.description, snapshot.entries, breakdowns, dimension).encode("utf-8")


# -- the chart ------------------------------------------------------------------------------------------


def progress_svg(snapshot: BoardSnapshot) -> bytes:
    """The chart of the best primary score over time per team; a closed phase's lines run to its end."""
    from leaderboard import charts  # matplotlib loads only where a chart is drawn

    ends = snapshot.facts.ends_at
    until = ends if ends is not None and ends <= utcnow() else None
    return charts.progress_chart(snapshot.candidates, snapshot.rules, metric_label=snapshot.rules.primary, until=until)


def progress_alt(snapshot: BoardSnapshot) -> str:
    """What the chart shows, in words (its ``alt`` text)."""
    from leaderboard import charts

    return charts.progress_alt_text(snapshot.candidates, snapshot.rules, metric_label=snapshot.rules.primary)
