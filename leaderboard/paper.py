"""A board as a paper's table: LaTeX (booktabs) and Markdown, with the intervals and the tied groups marked.

The table an overview paper prints: rank, team, system, the primary metric, its 95% interval, the tied group,
then the other metrics; baselines marked ``*``. Tied groups are set apart (LaTeX: a ``\\midrule`` between groups;
both: a Group column); an interval that is not what 95% says (rough, zero width, a stratum too small) is marked
``†`` and the note under the table says why; where the units are too few to compare no group is given and the
note says so. Endpoints carry the decimals their Monte Carlo error supports (``bootstrap.endpoint_decimals``).
Participants choose team and system names: every cell is escaped for its format, so a name cannot break the table
or inject markup.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from leaderboard.bootstrap import Interval, endpoint_decimals
from leaderboard.ranking import Entry
from leaderboard.tables import LARGE, Column, column_value, leaderboard_columns, metric_column

if TYPE_CHECKING:
    from leaderboard.uncertainty import BoardUncertainty
    from scorers.description import ScorerDescription

DAGGER = "†"


def interval_words(interval: Interval, column: Column) -> str:
    """``low–high`` with the decimals the endpoints' Monte Carlo error supports (at most the column's); ``zero
    width`` where every resample scored the same; ``–`` without an interval."""
    if interval.low is None or interval.high is None:
        return "–"
    if interval.zero_width:
        return "zero width"
    low, high = interval.low, interval.high
    if max(abs(low), abs(high)) * (100 if column.fraction else 1) >= LARGE:
        return f"{column.format(low)}–{column.format(high)}"
    if column.fraction:
        decimals = endpoint_decimals(interval.mc_error, scale=100.0, most=2)
        return f"{low * 100:.{decimals}f}–{high * 100:.{decimals}f}"
    most = column.decimals if column.decimals is not None else 4
    decimals = endpoint_decimals(interval.mc_error, scale=1.0, most=most)
    return f"{low:.{decimals}f}–{high:.{decimals}f}"


class _Rows:
    """The table's header, rows (plain text cells), group starts, marks and notes, shared by both formats."""

    def __init__(
        self,
        description: ScorerDescription,
        entries: Sequence[Entry],
        uncertainty: BoardUncertainty[int] | None,
    ) -> None:
        primary = description.primary_metric
        others = [c for c in leaderboard_columns(description, entries) if c.dimension is None and c.metric != primary]
        main = metric_column(description, primary)
        shown = uncertainty is not None
        grouped = shown and uncertainty is not None and uncertainty.comparable
        self.header = ["#", "Team", "System", main.label]
        if shown:
            self.header.append("95% CI")
        if grouped:
            self.header.append("Group")
        self.header += [c.label for c in others]
        self.rows: list[list[str]] = []
        self.starts: list[bool] = []
        marked = False
        previous: int | None = None
        for entry in entries:
            c = entry.candidate
            cells = [
                str(entry.rank),
                c.team + (" *" if c.baseline else ""),
                c.system,
                main.format(column_value(entry, main)),
            ]
            group = None
            if uncertainty is not None:
                interval = uncertainty.intervals.get(c.submission_id)
                words = interval_words(interval, main) if interval is not None else "–"
                if interval is not None and not interval.reliable:
                    words += f" {DAGGER}"
                    marked = True
                cells.append(words)
                group = uncertainty.group_of(c.submission_id)
                if grouped:
                    cells.append(str(group) if group is not None else "–")
            self.starts.append(bool(self.rows) and grouped and group != previous)
            previous = group
            cells += [col.format(column_value(entry, col)) for col in others]
            self.rows.append(cells)
        self.notes = _notes(uncertainty, marked, any(e.candidate.baseline for e in entries))


def _notes(uncertainty: BoardUncertainty[int] | None, marked: bool, baselines: bool) -> list[str]:
    notes = []
    if uncertainty is not None:
        notes.append(
            "95% CI: bootstrap interval over the scored documents (BCa, widened for small samples)."
            if uncertainty.comparable
            else "95% CI: bootstrap interval over the scored documents (BCa, widened for small samples). "
            "Too few documents to compare entries: no groups are given (which does not mean tied)."
        )
        if uncertainty.comparable:
            notes.append(
                "Entries of one group cannot be told apart: each was compared with the next on the same documents "
                "(paired bootstrap test of equal means, Holm-corrected, 95%)."
            )
        if marked:
            notes.append(
                f"{DAGGER} Not a 95% interval: rough (5 documents or fewer), zero width, or resting on a "
                "stratum too small to estimate."
            )
        if any(i.selected_from > 1 for i in uncertainty.intervals.values()):
            notes.append(
                "An entry that is its team's best of several submissions has its interval widened and its "
                "comparison weighed for that choice (Bonferroni)."
            )
    if baselines:
        notes.append("* a baseline run by the organizers.")
    return notes


# -- LaTeX ----------------------------------------------------------------------------------------------------

_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    DAGGER: r"\textsuperscript{\dag}",
    "–": "--",
    "↑": r"$\uparrow$",
    "↓": r"$\downarrow$",
}
_LATEX_PATTERN = re.compile("|".join(re.escape(k) for k in _LATEX))


def latex_escape(text: str) -> str:
    """``text`` for a LaTeX document: its special characters as commands, control characters dropped."""
    text = "".join(ch for ch in text if ch >= " " or ch == "\t")
    return _LATEX_PATTERN.sub(lambda m: _LATEX[m.group(0)], text)


def latex_table(
    description: ScorerDescription,
    entries: Sequence[Entry],
    uncertainty: BoardUncertainty[int] | None = None,
    *,
    caption: str = "",
) -> str:
    """The board as a LaTeX ``table`` with a booktabs ``tabular`` (``\\usepackage{booktabs}``)."""
    table = _Rows(description, entries, uncertainty)
    return render_latex(table.header, table.rows, table.starts, table.notes, caption=caption)


def render_latex(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    starts: Sequence[bool],
    notes: Sequence[str],
    *,
    caption: str = "",
) -> str:
    """A booktabs table of plain-text cells (escaped here): a ``\\midrule`` above each row that ``starts`` a group,
    the ``notes`` and ``caption`` as its caption. The first three columns are left-aligned text but the first."""
    align = "rll" + "r" * (len(header) - 3)
    lines = [
        "% \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        f"\\begin{{tabular}}{{{align}}}",
        "\\toprule",
        " & ".join(latex_escape(h) for h in header) + " \\\\",
        "\\midrule",
    ]
    for cells, start in zip(rows, starts, strict=True):
        if start:
            lines.append("\\midrule")
        lines.append(" & ".join(latex_escape(c) for c in cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    text = (latex_escape(caption) + " " if caption else "") + latex_escape(" ".join(notes))
    if text.strip():
        lines.append(f"\\caption{{{text.strip()}}}")
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


# -- Markdown -------------------------------------------------------------------------------------------------

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def markdown_escape(text: str) -> str:
    """``text`` for a Markdown table cell: markup characters escaped, HTML as text, one line."""
    text = "".join(ch if ch >= " " else " " for ch in text)
    text = _MARKDOWN.sub(r"\\\1", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown_table(
    description: ScorerDescription,
    entries: Sequence[Entry],
    uncertainty: BoardUncertainty[int] | None = None,
    *,
    caption: str = "",
) -> str:
    """The board as a Markdown (GitHub, CommonMark with tables) table, its notes below it."""
    table = _Rows(description, entries, uncertainty)
    return render_markdown(table.header, table.rows, table.notes, caption=caption)


def render_markdown(
    header: Sequence[str], rows: Sequence[Sequence[str]], notes: Sequence[str], *, caption: str = ""
) -> str:
    """A Markdown table of plain-text cells (escaped here): the rank and the columns after the third right-aligned."""
    right = {0} | set(range(3, len(header)))
    lines = [f"**{markdown_escape(caption)}**", ""] if caption else []
    lines.append("| " + " | ".join(markdown_escape(h) for h in header) + " |")
    lines.append("|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|")
    lines += ["| " + " | ".join(markdown_escape(c) for c in cells) + " |" for cells in rows]
    if notes:
        lines += ["", *(markdown_escape(n) for n in notes)]
    return "\n".join(lines) + "\n"
