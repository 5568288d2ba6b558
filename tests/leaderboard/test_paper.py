"""Paper-ready tables of a board: LaTeX (booktabs) and Markdown with the intervals, the tied groups set apart and
marked, unreliable intervals daggered, notes saying what the marks mean, and names that cannot break the table."""

from __future__ import annotations

import re

import numpy as np
from markdown_it import MarkdownIt

from leaderboard.paper import interval_words, latex_escape, latex_table, markdown_escape, markdown_table
from leaderboard.ranking import Rules, rank
from leaderboard.tables import metric_column
from leaderboard.uncertainty import board_uncertainty, phase_seed
from tests.leaderboard.builders import describe, make_candidate
from tests.leaderboard.systems import MeanOf, mean_units

DESCRIPTION = describe()
NASTY = "a&b_%$#{}~^\\ | <i>x</i> *y*"


def _board(n: int = 40):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    levels = {"ada": 0.9, NASTY: 0.89, "cy": 0.3}
    values = {team: np.clip(rng.normal(level, 0.05, n), 0, 1) for team, level in levels.items()}
    candidates = [
        make_candidate(i, team, i, {"mean": float(v.mean()), "error": 1 - float(v.mean())}, baseline=team == "cy")
        for i, (team, v) in enumerate(values.items(), start=1)
    ]
    entries = rank(candidates, Rules.from_description(DESCRIPTION))
    units = {e.candidate.submission_id: mean_units(values[e.candidate.team].tolist()) for e in entries}
    uncertainty = board_uncertainty(
        MeanOf(),
        [(e.candidate.submission_id, units[e.candidate.submission_id]) for e in entries],
        "mean",
        seed=phase_seed("c", "t", "p"),
    )
    return entries, uncertainty


def _latex_rows(text: str) -> list[list[str]]:
    body = text.split("\\midrule", 1)[1].split("\\bottomrule", 1)[0]
    rows = [line for line in body.splitlines() if line.endswith("\\\\")]
    return [re.split(r"(?<!\\)&", row.removesuffix("\\\\")) for row in rows]


def test_the_latex_table_is_booktabs_with_groups_set_apart() -> None:
    entries, uncertainty = _board()
    assert uncertainty.groups == ((1, 2), (3,)) or len(uncertainty.groups) == 2
    text = latex_table(DESCRIPTION, entries, uncertainty, caption="Results of the test phase")
    assert text.count("\\toprule") == 1 and text.count("\\bottomrule") == 1
    assert "\\begin{tabular}{rllrrrr}" in text
    header = text.split("\\toprule\n", 1)[1].splitlines()[0]
    assert header.startswith("\\# & Team & System & ") and "95\\% CI & Group" in header
    rows = _latex_rows(text)
    assert [len(r) for r in rows] == [7, 7, 7]  # every row has every column: nothing a name holds splits a cell
    # Two groups: one \midrule under the header, one between the groups.
    assert text.count("\\midrule") == 2
    assert [r[5].strip() for r in rows] == ["1", "1", "2"]
    assert latex_escape(NASTY) in text and "<i>" in text  # escaped, not interpreted
    assert "\\caption{Results of the test phase 95\\% CI: bootstrap interval" in text
    assert "cy *" in text and "a baseline run by the organizers" in text
    assert text.count("{") == text.count("}") + text.count("\\{") - text.count("\\}")


def test_latex_escape_by_hand() -> None:
    assert latex_escape("50% of a_b & c") == "50\\% of a\\_b \\& c"
    assert latex_escape("\\x{y}") == "\\textbackslash{}x\\{y\\}"
    assert latex_escape("80.1–82.3 †") == "80.1--82.3 \\textsuperscript{\\dag}"


def test_the_markdown_table_renders_as_a_table_with_its_notes() -> None:
    entries, uncertainty = _board()
    text = markdown_table(DESCRIPTION, entries, uncertainty)
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert html.count("<tr>") == 4 and len(re.findall(r"<th[ >]", html)) == 7  # a header, three rows of seven
    assert "<i>" not in html and "&lt;i&gt;" in html  # a name's markup stays text
    assert "NASTY" not in text and "a&amp;b\\_%$\\#\\{\\}\\~^\\\\ \\| &lt;i&gt;x&lt;/i&gt; \\*y\\*" in text
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in html.split("<tr>")[2:]]
    assert [c[5] for c in cells] == ["1", "1", "2"]
    assert "paired bootstrap test of equal means" in html
    assert markdown_escape("a|b") == "a\\|b"


def test_unreliable_intervals_are_daggered_and_too_few_units_give_no_groups() -> None:
    entries, uncertainty = _board(4)
    text = markdown_table(DESCRIPTION, entries, uncertainty)
    assert "Group" not in text.splitlines()[0]
    assert "Too few documents to compare entries" in text and text.count(" †") >= 3
    assert "Not a 95% interval" in text
    latex = latex_table(DESCRIPTION, entries, uncertainty)
    assert latex.count("\\midrule") == 1 and "\\textsuperscript{\\dag}" in latex
    # Without uncertainty: the metrics only.
    plain = markdown_table(DESCRIPTION, entries)
    assert "95% CI" not in plain and plain.splitlines()[0].startswith("| \\# | Team | System |")


def test_interval_words_follow_the_monte_carlo_error() -> None:
    entries, uncertainty = _board()
    interval = uncertainty.intervals[entries[0].candidate.submission_id]
    column = metric_column(DESCRIPTION, "mean")
    words = interval_words(interval, column)
    assert re.fullmatch(r"\d+(\.\d+)?–\d+(\.\d+)?", words)
