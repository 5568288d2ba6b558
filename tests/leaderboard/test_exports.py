"""CSV and JSON exports: exact text, fractions, UTC times, and no spreadsheet formula injection."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import replace

import pytest

from leaderboard.exports import documents_csv, documents_json, leaderboard_csv, leaderboard_json, safe_cell
from leaderboard.ranking import Entry, Rules, rank
from tests.leaderboard.builders import describe, make_candidate

DESCRIPTION = describe()  # metrics: mean, error; leaderboard breakdown: language
EVIL_TEAM = "=cmd|' /C calc'!A0"


def _entries() -> list[Entry]:
    candidates = [
        make_candidate(1, "alpha", 0, {"mean": 0.75, "error": 0.25}, columns={"language": {"en": {"mean": 0.5}}}),
        make_candidate(2, EVIL_TEAM, 1, {"mean": 0.5, "error": math.nan}, system="+SUM(A1)", baseline=True),
    ]
    return rank(candidates, Rules.from_description(DESCRIPTION))


@pytest.mark.parametrize(
    ("text", "safe"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("  =1", "'  =1"),
        ("team-1", "team-1"),
        ("Team = best", "Team = best"),
        ("", ""),
    ],
)
def test_safe_cell_neutralises_formula_starts_only(text: str, safe: str) -> None:
    assert safe_cell(text) == safe


def test_leaderboard_csv_exact() -> None:
    assert leaderboard_csv(DESCRIPTION, _entries()) == (
        "rank,team,system,submitted_at,baseline,mean,error,language:en:mean\r\n"
        "1,alpha,alpha-system,2024-05-01T12:00:00Z,false,0.75,0.25,0.5\r\n"
        "2,'=cmd|' /C calc'!A0,'+SUM(A1),2024-05-01T13:00:00Z,true,0.5,,\r\n"
    )


def test_no_csv_cell_starts_like_a_formula() -> None:
    rows = list(csv.reader(io.StringIO(leaderboard_csv(DESCRIPTION, _entries()))))
    text_cells = [row[1:3] for row in rows]  # team and system: the user-chosen text
    assert all(not cell.startswith(("=", "+", "-", "@")) for cells in text_cells for cell in cells)
    assert rows[2][1] == "'" + EVIL_TEAM


def test_leaderboard_json_keeps_names_as_typed_and_nan_as_null() -> None:
    data = json.loads(leaderboard_json(DESCRIPTION, _entries()))
    assert data == {
        "scorer": "mean-test",
        "primary_metric": "mean",
        "metrics": [
            {"name": "mean", "meaning": "mean of the document values", "higher_is_better": True, "format": "percent"},
            {"name": "error", "meaning": "one minus the mean", "higher_is_better": False, "format": "percent"},
        ],
        "columns": ["mean", "error", "language:en:mean"],
        "column_titles": {"mean": "mean", "error": "error", "language:en:mean": "language:en:mean"},
        "entries": [
            {
                "rank": 1,
                "team": "alpha",
                "system": "alpha-system",
                "submitted_at": "2024-05-01T12:00:00Z",
                "baseline": False,
                "metrics": {"mean": 0.75, "error": 0.25},
                "breakdown": {"language": {"en": {"mean": 0.5}}},
            },
            {
                "rank": 2,
                "team": EVIL_TEAM,
                "system": "+SUM(A1)",
                "submitted_at": "2024-05-01T13:00:00Z",
                "baseline": True,
                "metrics": {"mean": 0.5, "error": None},
                "breakdown": {"language": {"en": {"mean": None}}},
            },
        ],
    }


def test_a_metric_with_a_title_heads_its_csv_column_with_it_and_json_keeps_both() -> None:
    """A scoring program's column titles ("Prediction score") head the CSV; the JSON has key and title."""
    titled = replace(
        DESCRIPTION,
        metrics=tuple(
            replace(m, title={"mean": "Prediction score", "error": "Error rate"}[m.name]) for m in DESCRIPTION.metrics
        ),
    )
    header = leaderboard_csv(titled, _entries()).splitlines()[0]
    assert header == "rank,team,system,submitted_at,baseline,Prediction score,Error rate,language:en:Prediction score"
    data = json.loads(leaderboard_json(titled, _entries()))
    assert data["columns"] == ["mean", "error", "language:en:mean"]
    assert data["column_titles"] == {
        "mean": "Prediction score",
        "error": "Error rate",
        "language:en:mean": "language:en:Prediction score",
    }
    assert [(m["name"], m["title"]) for m in data["metrics"]] == [("mean", "Prediction score"), ("error", "Error rate")]
    assert data["entries"][0]["metrics"] == {"mean": 0.75, "error": 0.25}  # values stay keyed by the metric
    # A title is the organizer's text: one that starts like a formula is neutralised in the CSV header too.
    evil = replace(titled, metrics=(replace(titled.metrics[0], title="=1+1"), titled.metrics[1]))
    assert leaderboard_csv(evil, _entries()).splitlines()[0].split(",")[5] == "'=1+1"


BREAKDOWNS = {
    1: {"document": {"d10": {"mean": 1.0, "error": 0.0}, "d2": {"mean": 0.5, "error": 0.5, "gold": 3}}},
    2: {"document": {'=HYPERLINK("http://x")': {"mean": 0.0, "error": 1.0}}},
}


def test_documents_csv_has_one_row_per_entry_and_document() -> None:
    assert documents_csv(DESCRIPTION, _entries(), BREAKDOWNS) == (
        "rank,team,system,submitted_at,baseline,document,mean,error,gold\r\n"
        "1,alpha,alpha-system,2024-05-01T12:00:00Z,false,d2,0.5,0.5,3.0\r\n"
        "1,alpha,alpha-system,2024-05-01T12:00:00Z,false,d10,1.0,0.0,\r\n"
        '2,\'=cmd|\' /C calc\'!A0,\'+SUM(A1),2024-05-01T13:00:00Z,true,"\'=HYPERLINK(""http://x"")",0.0,1.0,\r\n'
    )


def test_documents_json_rows() -> None:
    rows = json.loads(documents_json(DESCRIPTION, _entries(), BREAKDOWNS))["rows"]
    assert [(r["team"], r["document"], r["metrics"]) for r in rows] == [
        ("alpha", "d2", {"mean": 0.5, "error": 0.5, "gold": 3.0}),
        ("alpha", "d10", {"mean": 1.0, "error": 0.0, "gold": None}),
        (EVIL_TEAM, '=HYPERLINK("http://x")', {"mean": 0.0, "error": 1.0, "gold": None}),
    ]


def test_an_entry_without_a_stored_breakdown_has_no_document_rows() -> None:
    assert documents_csv(DESCRIPTION, _entries(), {}) == "rank,team,system,submitted_at,baseline,document\r\n"


def test_a_dimension_named_like_an_entry_field_is_refused() -> None:
    with pytest.raises(ValueError, match="breakdown dimension 'team' clashes"):
        documents_csv(DESCRIPTION, _entries(), BREAKDOWNS, dimension="team")


def test_infinite_values_are_written_as_missing_so_the_json_stays_valid() -> None:
    entries = rank([make_candidate(1, "a", 0, {"mean": math.inf, "error": 0.5})], Rules("error"))
    assert json.loads(leaderboard_json(DESCRIPTION, entries))["entries"][0]["metrics"] == {"mean": None, "error": 0.5}
    assert leaderboard_csv(DESCRIPTION, entries).splitlines()[1] == "1,a,a-system,2024-05-01T12:00:00Z,false,,0.5"
