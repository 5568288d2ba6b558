"""Leaderboards computed from stored scores and a phase's rules (pure: no I/O, no frameworks).

``ranking`` decides who is ranked where; ``tables`` turns metrics and breakdowns into rows for pages;
``exports`` writes CSV and JSON; ``bootstrap`` gives confidence intervals from stored unit
statistics, ``significance`` paired comparisons of neighbours and groups of tied systems, both on the
replicates of ``resampling`` (``strata`` widens for strata too small to resample); ``uncertainty`` puts both
together for a board (what a score stores, what a board shows); ``ladder`` the Ladder, a board a team cannot
overfit by submitting many variants; ``charts`` renders SVG charts with matplotlib. ``charts`` is deliberately
not imported here: import ``leaderboard.charts`` where a chart is drawn, so that code that only ranks or exports
does not load matplotlib. numpy and SciPy are imported inside the functions that compute with them (annotations
name them under ``TYPE_CHECKING``), so that importing the package, as every server and worker does, loads neither.
"""

from leaderboard.bootstrap import FEW_UNITS, Interval, bootstrap_interval
from leaderboard.exports import documents_csv, documents_json, iso_utc, leaderboard_csv, leaderboard_json, safe_cell
from leaderboard.ranking import SELECTIONS, Candidate, EntrantKey, Entry, Rules, Selection, rank, select_per_team, utc
from leaderboard.resampling import seed_for
from leaderboard.significance import Comparison, compare_neighbours, tied_groups
from leaderboard.tables import (
    Board,
    BoardRow,
    Column,
    Row,
    Table,
    arrow,
    breakdown_table,
    breakdown_tables,
    leaderboard_columns,
    leaderboard_table,
    metrics_table,
    percent,
)
from leaderboard.uncertainty import BoardUncertainty, board_uncertainty, phase_seed

__all__ = [
    "FEW_UNITS",
    "SELECTIONS",
    "Board",
    "BoardRow",
    "BoardUncertainty",
    "Candidate",
    "Column",
    "Comparison",
    "EntrantKey",
    "Entry",
    "Interval",
    "Row",
    "Rules",
    "Selection",
    "Table",
    "arrow",
    "board_uncertainty",
    "bootstrap_interval",
    "breakdown_table",
    "breakdown_tables",
    "compare_neighbours",
    "documents_csv",
    "documents_json",
    "iso_utc",
    "leaderboard_columns",
    "leaderboard_csv",
    "leaderboard_json",
    "leaderboard_table",
    "metrics_table",
    "percent",
    "phase_seed",
    "rank",
    "safe_cell",
    "seed_for",
    "select_per_team",
    "tied_groups",
    "utc",
]
