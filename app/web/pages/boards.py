"""What the leaderboard page, its exports and its chart make of a ``BoardSnapshot``.

The routes keep each product with its snapshot (``BoardSnapshot.derived``), so serving a popular
leaderboard again costs a dictionary lookup until a score lands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy.orm import Session

from app.services.boards.snapshot import BoardSnapshot
from app.services.errors import NotFound
from app.services.submissions.results import current_scores
from app.storage.types import utcnow
from leaderboard.exports import documents_csv, documents_json, leaderboard_csv, leaderboard_json
from leaderboard.paper import interval_words, latex_table, markdown_table
from leaderboard.tables import Column, leaderboard_table, metric_column
from leaderboard.uncertainty import BoardUncertainty
from scorers import ScorerDescription


@dataclass(frozen=True)
class HeaderCell:
    label: str
    title: str
    primary: bool
    breakdown: bool


@dataclass(frozen=True)
class Whisker:
    """A compact picture of an entry's interval: x positions (0 to ``WHISKER_WIDTH``) of its ends and its
    estimate on a scale shared by the board's rows, and the interval in words."""

    low: float
    high: float
    estimate: float
    text: str
    title: str
    flagged: bool


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
    whisker: Whisker | None = None
    #: The row's group of statistically tied entries (1 the top), and whether it opens the group.
    group: int | None = None
    group_start: bool = False


@dataclass(frozen=True)
class BoardView:
    headers: tuple[HeaderCell, ...]
    rows: tuple[RowView, ...]
    primary_label: str
    #: The board shows intervals and tied groups (not hidden, not turned off, something ranked).
    uncertain: bool = False
    few_units: bool = False
    groups: int = 0
    #: No pair could be compared: the units are too few (5 or fewer); the board has no tied groups.
    too_few: bool = False
    #: Some interval is not what 95% says (rough, zero width, a stratum too small): marked †, said below.
    unreliable: bool = False
    #: Some entry is the best of several submissions: its interval and comparison account for the choice.
    selected: bool = False


#: The whisker's drawing width in pixels (and its margin at each end).
WHISKER_WIDTH, WHISKER_MARGIN = 96.0, 3.0


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
    uncertainty = snapshot.uncertainty
    if uncertainty is None:
        return BoardView(headers, rows, primary_label)
    primary_column = next((c for c in board.columns if c.dimension is None and c.metric == primary), None)
    whiskers = _whiskers(uncertainty, primary_column or metric_column(snapshot.description, primary))
    seen: set[int] = set()
    placed = []
    for row in rows:
        group = uncertainty.group_of(row.submission_id)
        start = group is not None and group not in seen
        seen.add(group or 0)
        placed.append(replace(row, whisker=whiskers.get(row.submission_id), group=group, group_start=start))
    return BoardView(
        headers,
        tuple(placed),
        primary_label,
        True,
        uncertainty.few_units,
        len(uncertainty.groups),
        too_few=not uncertainty.comparable,
        unreliable=uncertainty.unreliable,
        selected=any(i.selected_from > 1 for i in uncertainty.intervals.values()),
    )


def _whiskers(uncertainty: BoardUncertainty[int], column: Column) -> dict[int, Whisker]:
    """Each entry's whisker, on the scale from the lowest to the highest end of the board's intervals."""
    known = {k: i for k, i in uncertainty.intervals.items() if i.low is not None and i.high is not None}
    if not known:
        return {}
    bottom = min(min(i.low or 0.0, i.estimate or 0.0) for i in known.values())
    top = max(max(i.high or 0.0, i.estimate or 0.0) for i in known.values())
    span = top - bottom

    def x(value: float) -> float:
        share = 0.5 if span <= 0 else (value - bottom) / span
        return round(WHISKER_MARGIN + share * (WHISKER_WIDTH - 2 * WHISKER_MARGIN), 1)

    out = {}
    for key, i in known.items():
        assert i.low is not None and i.high is not None
        words = interval_words(i, column)
        title = f"{i.label}: {column.format(i.low)}–{column.format(i.high)} ({i.method}, {i.units} units resampled)"
        if i.few_units and not i.label.startswith("rough"):
            title += f"; only {i.units} units: says little"
        flagged = bool(set(i.notes) - {"undefined_replicates"})
        estimate = i.estimate if i.estimate is not None else (i.low + i.high) / 2
        out[key] = Whisker(x(i.low), x(i.high), x(estimate), words, title, flagged)
    return out


# -- exports --------------------------------------------------------------------------------------------


def export_name(snapshot: BoardSnapshot, what: str, extension: str) -> str:
    competition, task, phase = snapshot.facts.ref
    return f"{competition}-{task}-{phase}-{what}.{extension}"


def board_export(snapshot: BoardSnapshot, extension: str) -> bytes:
    """The leaderboard as CSV or JSON (the ``leaderboard.exports`` formats), or as a paper's table in LaTeX
    (booktabs) or Markdown (``leaderboard.paper``), UTF-8."""
    if extension in ("tex", "md"):
        facts = snapshot.facts
        caption = f"{facts.competition_title}: {facts.task_title}, {facts.phase_title}."
        paper = latex_table if extension == "tex" else markdown_table
        return paper(snapshot.description, snapshot.entries, snapshot.uncertainty, caption=caption).encode("utf-8")
    write = leaderboard_csv if extension == "csv" else leaderboard_json
    return write(snapshot.description, snapshot.entries, uncertainty=snapshot.uncertainty).encode("utf-8")


def document_dimension(description: ScorerDescription) -> str | None:
    """The breakdown with one row per document (group, query, frame): what the scorer declares, the one key
    its ``breakdown`` writes them under; None where it stores no such rows."""
    return description.per_unit_breakdown


def documents_export(snapshot: BoardSnapshot, extension: str, session_factory: Callable[[], Session]) -> bytes:
    """Every entry's per-document (per-unit) scores as CSV or JSON, from the stored breakdowns."""
    dimension = document_dimension(snapshot.description)
    if dimension is None:
        raise NotFound(f"the scorer {snapshot.description.name} keeps no per-document scores")
    if snapshot.facts.board == "ladder" and snapshot.viewers == "public":
        # Each document's score of the submissions the ladder shows would answer what the ladder refuses to.
        raise NotFound("a ladder board shows no per-document scores")
    ids = [e.candidate.submission_id for e in snapshot.entries]
    with session_factory() as session:
        breakdowns = {sid: score.breakdown for sid, score in current_scores(session, ids, full=True).items()}
    write = documents_csv if extension == "csv" else documents_json
    return write(snapshot.description, snapshot.entries, breakdowns, dimension).encode("utf-8")


# -- the chart ------------------------------------------------------------------------------------------


def progress_svg(snapshot: BoardSnapshot) -> bytes:
    """The chart of the best primary score over time per team; a closed phase's lines run to its end."""
    from leaderboard import charts  # matplotlib loads only where a chart is drawn

    ends = snapshot.facts.ends_at
    until = ends if ends is not None and ends <= utcnow() else None
    column = _primary_column(snapshot)
    label = primary_title(snapshot)
    return charts.progress_chart(snapshot.candidates, snapshot.rules, metric_label=label, until=until, column=column)


def progress_alt(snapshot: BoardSnapshot) -> str:
    """What the chart shows, in words (its ``alt`` text)."""
    from leaderboard import charts

    column, label = _primary_column(snapshot), primary_title(snapshot)
    return charts.progress_alt_text(snapshot.candidates, snapshot.rules, metric_label=label, column=column)


def _primary_column(snapshot: BoardSnapshot) -> Column:
    return metric_column(snapshot.description, snapshot.rules.primary)


def primary_title(snapshot: BoardSnapshot) -> str:
    """The primary metric's heading: its column title (a scoring program's), else its name."""
    spec = snapshot.description.metric(snapshot.rules.primary)
    return spec.label if spec is not None else snapshot.rules.primary
