"""Tables as plain data: formatting, column order, breakdown rows and the leaderboard's columns."""

from __future__ import annotations

import math

import pytest

from leaderboard.ranking import Entry, Rules, rank
from leaderboard.tables import (
    MISSING,
    arrow,
    breakdown_table,
    breakdown_tables,
    humanize,
    leaderboard_columns,
    leaderboard_table,
    metric_text,
    metrics_table,
    natural_key,
    percent,
    plain_number,
)
from scorers import scorer_class
from tests.conftest import require_shared
from tests.leaderboard.builders import T0, describe, make_candidate

DESCRIPTION = describe()  # metrics: mean (higher is better), error (lower is better)


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.0, "0.00"), (1.0, "100.00"), (0.123456, "12.35"), (0.5, "50.00"), (None, MISSING), (math.nan, MISSING)],
)
def test_percent_has_two_decimals(value: float | None, text: str) -> None:
    assert percent(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(3.0, "3"), (2.5, "2.5"), (1 / 3, "0.3333"), (0.9999999999999999, "1"), (-2.99999, "-3"), (None, MISSING)],
)
def test_plain_numbers_drop_needless_decimals(value: float | None, text: str) -> None:
    assert plain_number(value) == text


@pytest.mark.parametrize(
    ("value", "fraction", "decimals", "text"),
    [
        (1e308, True, None, "1.00e+310"),  # value * 100 would be inf
        (-1.7e308, True, None, "-1.70e+310"),
        (1e308, False, None, "1e+308"),  # not 309 digits
        (1e308, False, 4, "1.0000e+308"),
        (123456789.5, False, 2, "123456789.50"),
        (0.825, False, None, "0.825"),
        (0.825, False, 4, "0.8250"),
        (0.825, True, 4, "82.50"),
        (math.inf, False, None, "∞"),
    ],
)
def test_one_rule_writes_every_metric_even_the_largest_floats(
    value: float, fraction: bool, decimals: int | None, text: str
) -> None:
    assert metric_text(value, fraction=fraction, decimals=decimals) == text


def test_arrows_and_names() -> None:
    assert (arrow(True), arrow(False)) == ("↑", "↓")
    assert humanize("relation_label") == "Relation label"
    assert sorted(["doc10", "doc2", "Doc1", "doc2b"], key=natural_key) == ["Doc1", "doc2", "doc2b", "doc10"]


def test_metrics_table_is_one_row_in_declared_order_then_extras() -> None:
    table = metrics_table(DESCRIPTION, {"support": 12, "error": 0.25, "mean": 0.75})
    assert [c.label for c in table.columns] == ["mean ↑", "error ↓", "support"]
    assert [c.meaning for c in table.columns] == ["mean of the document values", "one minus the mean", ""]
    [row] = table.rows
    assert (row.key, row.values, row.cells) == ("overall", (0.75, 0.25, 12.0), ("75.00", "25.00", "12"))


def test_document_table_rows_in_natural_order_with_counts_as_plain_numbers() -> None:
    breakdown = {
        "document": {
            "en/doc10": {"mean": 0.5, "error": 0.5, "gold": 4},
            "en/doc2": {"mean": 0.25, "error": 0.75, "gold": 2},
            "de/doc1": {"mean": 1.0, "error": 0.0},
        }
    }
    table = breakdown_table(DESCRIPTION, breakdown, "document")
    assert (table.title, table.key_label) == ("Per document", "Document")
    assert [c.id for c in table.columns] == ["mean", "error", "gold"]
    assert [(r.key, r.cells) for r in table.rows] == [
        ("de/doc1", ("100.00", "0.00", MISSING)),
        ("en/doc2", ("25.00", "75.00", "2")),
        ("en/doc10", ("50.00", "50.00", "4")),
    ]


def test_a_dimension_the_breakdown_lacks_gives_an_empty_table() -> None:
    table = breakdown_table(DESCRIPTION, {}, "role")
    assert (table.title, table.columns, table.rows) == ("Per role", (), ())


def test_breakdown_tables_put_leaderboard_dimensions_first_and_documents_last() -> None:
    row = {"mean": 0.5}
    breakdown = {"document": {"d": row}, "topic": {"t": row}, "language": {"en": row}, "area": {"a": row}}
    assert [t.dimension for t in breakdown_tables(DESCRIPTION, breakdown)] == ["language", "area", "topic", "document"]


def test_table_to_dict_is_plain_data() -> None:
    table = breakdown_table(DESCRIPTION, {"language": {"en": {"mean": 0.5}}}, "language")
    assert table.to_dict() == {
        "dimension": "language",
        "title": "Per language",
        "key_label": "Language",
        "columns": [{"id": "mean", "label": "mean ↑", "meaning": "mean of the document values"}],
        "rows": [{"key": "en", "values": [0.5], "cells": ["50.00"]}],
    }


def _entries() -> list[Entry]:
    candidates = [
        make_candidate(
            1,
            "a",
            0,
            {"mean": 0.6, "error": 0.4},
            columns={"language": {"en": {"mean": 0.7, "error": 0.3}, "de": {"mean": 0.5, "error": 0.5}}},
        ),
        make_candidate(2, "b", 1, {"mean": 0.8, "error": 0.2}, columns={"language": {"en": {"mean": 0.8}}}),
    ]
    return rank(candidates, Rules.from_description(DESCRIPTION))


def test_leaderboard_columns_add_the_primary_metric_per_language() -> None:
    columns = leaderboard_columns(DESCRIPTION, _entries())
    assert [c.id for c in columns] == ["mean", "error", "language:de:mean", "language:en:mean"]
    assert [c.label for c in columns] == ["mean ↑", "error ↓", "de mean ↑", "en mean ↑"]


def test_leaderboard_columns_with_chosen_breakdown_metrics() -> None:
    columns = leaderboard_columns(DESCRIPTION, _entries(), breakdown_metrics=["error"])
    assert [c.id for c in columns][2:] == ["language:de:error", "language:en:error"]


def test_leaderboard_table_rows_carry_rank_team_and_cells() -> None:
    table = leaderboard_table(DESCRIPTION, _entries())
    assert [(r.rank, r.team, r.submitted_at.isoformat(), r.cells) for r in table.rows] == [
        (1, "b", "2024-05-01T13:00:00+00:00", ("80.00", "20.00", MISSING, "80.00")),
        (2, "a", T0.isoformat(), ("60.00", "40.00", "50.00", "70.00")),
    ]
    assert table.rows[0].values == (0.8, 0.2, None, 0.8)


def test_svident_breakdowns_of_a_real_score_give_language_then_document_tables() -> None:
    from scorers import get_scorer

    case = require_shared("conformance", "svident-detection", "train-intlabels")
    scorer = get_scorer("svident-detection")
    report = scorer.score((case / "gold.tsv").read_bytes(), (case / "submission.json").read_bytes())
    tables = breakdown_tables(scorer.describe(), report.breakdown)
    assert [(t.title, [r.key for r in t.rows]) for t in tables] == [
        ("Per language", ["de", "en"]),
        ("Per document", ["de/21312", "en/63961"]),
    ]
    de = report.breakdown["language"]["de"]
    assert tables[0].rows[0].cells == (percent(de["f1"]), percent(de["precision"]), percent(de["recall"]))


def test_a_configured_trec_board_shows_the_configured_measures_in_order_counts_as_plain_numbers() -> None:
    described = scorer_class("trec").describe({"measures": ["P_5", "num_rel_ret", "map"]})
    assert (described.primary_metric, described.secondary_metrics) == ("P_5", ("num_rel_ret", "map"))
    rules = Rules.from_description(described)
    candidates = [
        make_candidate(1, "a", 0, {"map": 0.9, "P_5": 0.4, "num_rel_ret": 12.0}),
        make_candidate(2, "b", 1, {"map": 0.1, "P_5": 0.6, "num_rel_ret": 7.0}),
    ]
    table = leaderboard_table(described, rank(candidates, rules))
    assert [c.label for c in table.columns] == ["P_5 ↑", "num_rel_ret ↑", "map ↑"]
    assert [(r.team, r.cells) for r in table.rows] == [("b", ("60.00", "7", "10.00")), ("a", ("40.00", "12", "90.00"))]


def test_a_regression_board_ranked_by_a_configured_error_puts_the_smallest_first() -> None:
    described = scorer_class("regression").describe({"primary_metric": "rmse"})
    assert (described.primary_metric, described.higher_is_better) == ("rmse", False)
    candidates = [
        make_candidate(1, "a", 0, {"pearson": 0.9, "rmse": 1.25, "mae": 1.0}),
        make_candidate(2, "b", 1, {"pearson": 0.5, "rmse": 0.5, "mae": 0.25}),
    ]
    table = leaderboard_table(described, rank(candidates, Rules.from_description(described)))
    assert [c.label for c in table.columns] == ["rmse ↓", "pearson ↑", "mae ↓"]
    assert [(r.team, r.cells) for r in table.rows] == [("b", ("0.5", "0.5", "0.25")), ("a", ("1.25", "0.9", "1"))]
    stated = scorer_class("regression").describe({"primary_metric": "r2", "higher_is_better": False})
    assert stated.metric("r2") is not None and not stated.higher_is_better
