"""The fairness benchmark runs end to end on small floods and a shallow queue and prints every row (nothing
here is timed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.fair_bench import cost_table, shares_table
from scorers import register, scorer_names, unregister
from tests.app.slow_scorer import NAME as SLOW
from tests.app.slow_scorer import SlowScorer


@pytest.fixture
def slow() -> Iterator[None]:
    if SLOW not in scorer_names():
        register(SlowScorer)
    yield
    unregister(SLOW)


def test_the_tables_have_every_row(slow: None) -> None:
    shares = shares_table(8, 4, 0.05)
    assert shares[2].startswith("| jobs started after beta's first upload | fair: alpha | fair: beta |")
    windows = [line for line in shares if line.startswith("| ") and line[2].isdigit()]
    assert windows and all(line.count("|") == 6 for line in windows)
    assert sum(int(line.split("|")[3]) for line in windows) == 4  # every beta job started after it came
    *_, head, rule, figures = shares
    assert head.startswith("| alpha's jobs started between") and rule == "|---|---:|---:|"
    fair, _ = (int(cell) for cell in figures.strip("| ").split(" | "))
    assert fair <= 1  # beta's first job comes next (or after the one being claimed as it came)
    cost = cost_table(50, None)
    assert cost[0].startswith("| database | queued | pick the next job")
    assert cost[2].startswith("| SQLite | 50 | ") and cost[2].count(" ms") == 2
