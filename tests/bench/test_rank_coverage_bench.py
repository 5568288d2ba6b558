"""The mean-rank coverage bench runs on a few simulations: a system far ahead is covered, and a pair of equal
systems is rarely called different."""

from __future__ import annotations

from bench.rank_coverage_bench import SCENARIOS, measure


def test_the_bench_measures_coverage_and_calls() -> None:
    result = measure(30, SCENARIOS["apart, last two equal"], 20, seed=1, replicates=200)
    assert result.true == (1.0, 2.0, 3.5, 3.5)
    assert len(result.coverage) == 4 and all(0.0 <= c <= 1.0 for c in result.coverage)
    assert result.coverage[0] >= 0.9 and result.called <= 0.1
