"""A board's uncertainty: stored intervals are taken as they are, missing ones are computed the way a score
stores them, neighbours are compared on their units and cut into tied groups; and the exports carry it all."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from leaderboard.bootstrap import Interval
from leaderboard.exports import UNCERTAINTY_FIELDS, leaderboard_csv, leaderboard_json
from leaderboard.ranking import Entry, Rules, rank
from leaderboard.significance import REPLICATES as TEST_REPLICATES
from leaderboard.uncertainty import (
    LEVEL,
    REPLICATES,
    board_trials,
    board_uncertainty,
    interval_for,
    interval_record,
    phase_seed,
    stored_interval,
)
from tests.leaderboard.builders import describe, make_candidate
from tests.leaderboard.systems import MicroF1, count_units, documents

SEED = phase_seed("c", "t", "p")
DESCRIPTION = describe()
F1 = MicroF1()


def _system(seed: int, hit_rate: float, n: int = 40) -> dict[str, dict[str, int]]:
    return count_units(documents(np.random.default_rng(seed), n, hit_rate))


GOOD, ALSO_GOOD, POOR = _system(1, 0.9), _system(1, 0.89), _system(1, 0.3)


def test_a_stored_interval_reads_back_only_if_made_the_boards_way() -> None:
    interval = interval_for(F1, GOOD, "f1", seed=SEED)
    assert interval is not None and (interval.level, interval.replicates) == (LEVEL, REPLICATES)
    record = interval_record(interval, "f1")
    assert stored_interval(json.loads(json.dumps(record)), "f1") == interval
    assert stored_interval(record, "precision") is None  # another metric's interval is not this one's
    assert stored_interval({**(record or {}), "replicates": 10}, "f1") is None
    assert stored_interval({"metric": "f1", "low": 0.1}, "f1") is None  # damaged: computed again
    assert stored_interval(None, "f1") is None
    assert interval_for(F1, {}, "f1", seed=SEED) is None


def test_missing_intervals_are_computed_as_the_score_would_have_stored_them() -> None:
    stored = {1: interval_for(F1, GOOD, "f1", seed=SEED)}
    assert stored[1] is not None
    board = board_uncertainty(F1, [(1, GOOD), (2, POOR)], "f1", seed=SEED, stored=stored)  # type: ignore[arg-type]
    assert board.computed == 1
    assert board.intervals[1] is stored[1]
    assert board.intervals[2] == interval_for(F1, POOR, "f1", seed=SEED)
    # A stored interval is not recomputed: a marker value proves which one the board shows.
    marker = Interval(0.5, 0.1, 0.2, LEVEL, "bca-expanded", 40, 1, REPLICATES, 0)
    assert board_uncertainty(F1, [(1, GOOD)], "f1", seed=SEED, stored={1: marker}).intervals[1] is marker


def test_neighbours_are_compared_and_grouped() -> None:
    board = board_uncertainty(F1, [(1, GOOD), (2, ALSO_GOOD), (3, POOR)], "f1", seed=SEED)
    first, second = board.comparisons
    assert (first.better, first.worse, second.better, second.worse) == (1, 2, 2, 3)
    assert not first.significant and first.p_value is not None and first.p_value > 0.05
    assert second.significant and second.p_value is not None and second.p_value <= 0.05
    assert board.groups == ((1, 2), (3,))
    assert [board.group_of(k) for k in (1, 2, 3)] == [1, 1, 2]
    # Forty documents each: no interval is flagged as resting on few units.
    assert not board.few_units and board.interval_dict(1)["few_units"] is False  # type: ignore[index]


def test_an_entry_without_units_has_no_interval_and_draws_a_boundary() -> None:
    board = board_uncertainty(F1, [(1, GOOD), (2, None), (3, ALSO_GOOD)], "f1", seed=SEED)
    assert set(board.intervals) == {1, 3} and board.interval_dict(2) is None
    assert [c.p_value for c in board.comparisons] == [None, None]
    assert board.groups == ((1,), (2,), (3,))


def test_few_units_and_zero_width_are_flagged_and_labelled_for_what_they_are() -> None:
    perfect = count_units([[3, 3, 3]] * 5)
    board = board_uncertainty(F1, [(1, perfect)], "f1", seed=SEED)
    shown = board.interval_dict(1)
    assert shown == {
        "low": 1.0,
        "high": 1.0,
        "level": 0.95,
        "method": "bca-expanded",
        "units": 5,
        "few_units": True,
        "zero_width": True,
        "too_few_units": True,
        "reliable": False,
        "label": "zero width: every resample of the 5 units scored the same; no 95% interval",
        "notes": ["few_units", "too_few_units", "zero_width"],
        "mc_error": 0.0,
        "selected_from": 1,
    }
    assert board.few_units and board.unreliable
    rough = board_uncertainty(F1, [(1, _system(2, 0.6, 4))], "f1", seed=SEED).interval_dict(1)
    assert rough is not None and rough["too_few_units"] and not rough["reliable"]
    assert rough["label"].startswith("rough: from 4 units")


def test_a_board_on_five_units_or_fewer_has_no_tied_groups_but_says_too_few() -> None:
    far_apart = [(k, _system(3, 0.9 - 0.25 * k, 5)) for k in range(3)]
    board = board_uncertainty(F1, far_apart, "f1", seed=SEED)
    assert board.too_few and not board.comparable and board.groups == ()
    assert [board.group_of(k) for k in range(3)] == [None, None, None]
    assert all(c.too_few for c in board.comparisons)


def test_a_selected_best_gets_a_wider_interval_and_a_harder_comparison() -> None:
    entries = [(1, GOOD), (2, ALSO_GOOD), (3, POOR)]
    plain = board_uncertainty(F1, entries, "f1", seed=SEED)
    chosen = board_uncertainty(F1, entries, "f1", seed=SEED, selected={1: 20, 3: 5})
    wide, narrow = chosen.intervals[1], plain.intervals[1]
    assert wide.selected_from == 20 and "selected" in wide.notes and "best of 20" in wide.label
    # z(1 - 0.025 / 20) / z(0.975) = 3.023 / 1.960 on each side of the estimate.
    assert wide.high - wide.estimate == pytest.approx((narrow.high - narrow.estimate) * 1.5424, rel=1e-3)  # type: ignore[operator]
    assert chosen.intervals[2] == plain.intervals[2]  # not picked from several
    assert chosen.fresh[1] == narrow  # what a score would store: without the widening
    first = chosen.comparisons[0]
    assert first.selected_from == 20 and first.p_raw == plain.comparisons[0].p_raw


@pytest.fixture
def board_entries() -> list[Entry]:
    candidates = [make_candidate(1, "a", 0, {"mean": 0.9, "error": 0.1}), make_candidate(2, "b", 1, {"mean": 0.3})]
    return rank(candidates, Rules.from_description(DESCRIPTION))


def test_exports_carry_the_intervals_groups_and_comparisons(board_entries: list[Entry]) -> None:
    ids = [e.candidate.submission_id for e in board_entries]
    board = board_uncertainty(F1, [(ids[0], GOOD), (ids[1], POOR)], "f1", seed=SEED)
    rows = list(csv.DictReader(io.StringIO(leaderboard_csv(DESCRIPTION, board_entries, uncertainty=board))))
    assert set(UNCERTAINTY_FIELDS) <= set(rows[0])
    for row, sid in zip(rows, ids, strict=True):
        interval = board.intervals[sid]
        assert float(row["interval_low"]) == interval.low and float(row["interval_high"]) == interval.high
        assert (row["interval_level"], row["interval_method"], row["interval_units"]) == ("0.95", "bca-expanded", "40")
        assert (row["interval_few_units"], row["interval_zero_width"]) == ("false", "false")
        assert (row["interval_reliable"], row["interval_label"]) == ("true", "95% interval")
    assert [row["tied_group"] for row in rows] == ["1", "2"]
    document = json.loads(leaderboard_json(DESCRIPTION, board_entries, uncertainty=board))
    assert document["entries"][0]["interval"] == board.interval_dict(ids[0])
    assert [e["tied_group"] for e in document["entries"]] == [1, 2]
    (comparison,) = document["comparisons"]
    assert (comparison["better"], comparison["worse"], comparison["significant"]) == (ids[0], ids[1], True)
    assert comparison["method"].startswith("paired bootstrap test of equal means")
    # Without uncertainty the exports are as before.
    assert "tied_group" not in leaderboard_csv(DESCRIPTION, board_entries).splitlines()[0]
    assert "comparisons" not in json.loads(leaderboard_json(DESCRIPTION, board_entries))


def test_given_tests_are_taken_and_only_the_other_pairs_are_tested() -> None:
    entries = [(1, GOOD), (2, ALSO_GOOD), (3, POOR)]
    fresh = board_uncertainty(F1, entries, "f1", seed=SEED)
    assert fresh.tested == 2 and set(fresh.tests) == {(1, 2), (2, 3)}
    # With the first pair's test given, entry 1's units are not needed, and the board is the same.
    kept = {(1, 2): fresh.tests[(1, 2)]}
    again = board_uncertainty(
        F1, [(1, None), (2, ALSO_GOOD), (3, POOR)], "f1", seed=SEED, known_tests=kept, stored={1: fresh.intervals[1]}
    )
    assert again.tested == 1
    assert (again.comparisons, again.groups, again.intervals) == (fresh.comparisons, fresh.groups, fresh.intervals)


def test_every_board_tests_its_pairs_with_the_same_number_of_replicates() -> None:
    # The p-value comes from the replicates' standard error, so a growing board keeps every kept test usable.
    assert {board_trials(m) for m in (0, 1, 12, 13, 50, 500)} == {TEST_REPLICATES}
