"""The coverage bench's simulation, at a few dozen phases per row, so that its table cannot rot: pooling small
strata lifts the coverage at 29 + 1 groups from a fraction to near the nominal 95%; every interval whose coverage
stays well below 95% (tiny phases, pooled strata) is labelled for what it is; and a tiny phase never calls two
equal systems different."""

from __future__ import annotations

import numpy as np

from bench.coverage_bench import interval_pair, population, small_strata, tiny
from leaderboard.bootstrap import TOO_FEW
from tests.leaderboard.systems import MeanOf, mean_units

TRIALS = 40


def _shares(row: str) -> list[float]:
    return [float(cell.strip().rstrip("%")) / 100 for cell in row.strip("|").split("|")[2:] if "%" in cell]


def test_pooling_small_strata_lifts_their_coverage_and_labels_it() -> None:
    rows = {row.split("|")[1].strip(): _shares(row) for row in small_strata(TRIALS)}
    before, after = rows["small strata 29+1"]
    assert before < 0.4 and after > 0.75, "without pooling one group in a stratum adds no variance"
    assert rows["small strata 27+3"][1] >= 0.9
    # What stays below 95% is labelled: the pooled interval says it was widened and is not a plain 95% interval.
    rng = np.random.default_rng(7)
    units = mean_units(population(rng, 30).tolist(), ["a"] * 29 + ["b"])
    _, pooled = interval_pair(units, MeanOf(by_language=True), 0)
    assert "small_strata" in pooled.notes and "widened for small strata" in pooled.label  # type: ignore[attr-defined]


def test_tiny_phases_are_labelled_rough_and_compare_nothing() -> None:
    rows = tiny(TRIALS)
    for n in range(2, TOO_FEW + 1):
        (different,) = [r for r in rows if f"{n} documents | equal systems" in r]
        assert _shares(different)[1] == 0.0, "a test that cannot reject reports nothing"
        (coverage,) = [r for r in rows if f"{n} documents | interval coverage" in r]
        assert _shares(coverage)[0] < 0.95
    # Each such interval is labelled rough, not 95%; at 6 documents it is a 95% interval again.
    for n in (3, TOO_FEW, TOO_FEW + 1):
        x = population(np.random.default_rng(n), n)
        _, interval = interval_pair(mean_units(x.tolist()), MeanOf(), n)
        rough = n <= TOO_FEW
        assert interval.too_few is rough and interval.label.startswith("rough") is rough  # type: ignore[attr-defined]
