"""Paired comparisons: identical systems are never told apart, clearly different ones are; Holm's correction;
agreement with scipy's permutation test; groups of statistically tied systems."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from leaderboard.significance import (
    Comparison,
    compare_neighbours,
    holm,
    paired_test,
    tied_groups,
    trials_for,
)
from tests.leaderboard.systems import MeanOf, MicroF1, count_units, documents, mean_units

RNG_SEED = 31


def _system(rng: np.random.Generator, n: int, hit_rate: float) -> dict[str, dict[str, object]]:
    return count_units(documents(rng, n, hit_rate))


def test_identical_systems_are_never_significantly_different() -> None:
    rng = np.random.default_rng(RNG_SEED)
    for n in (1, 6, 40):
        units = _system(rng, n, 0.5)
        test = paired_test(MicroF1(), units, dict(units), "f1")
        assert test is not None
        assert (test.difference, test.p_value) == (0.0, 1.0)
    board = [(key, _system(np.random.default_rng(1), 30, 0.5)) for key in "abcd"]
    comparisons = compare_neighbours(MicroF1(), board, "f1")
    assert [c.p_value for c in comparisons] == [1.0, 1.0, 1.0]
    assert not any(c.significant for c in comparisons)
    assert tied_groups(list("abcd"), comparisons) == [list("abcd")]


def test_clearly_different_systems_are_significantly_different() -> None:
    rng = np.random.default_rng(RNG_SEED)
    gold = documents(rng, 40, 0.0)[:, 1:]  # predicted and gold counts, shared by both systems
    good = count_units(np.column_stack([np.minimum(gold[:, 0], gold[:, 1]), gold]))
    poor = count_units(np.column_stack([np.minimum(gold[:, 0], gold[:, 1]) // 3, gold]))
    test = paired_test(MicroF1(), good, poor, "f1")
    assert test is not None and test.difference > 0.3
    assert test.p_value == pytest.approx(1 / 1001)  # no trial reaches the observed difference
    (comparison,) = compare_neighbours(MicroF1(), [("good", good), ("poor", poor)], "f1")
    assert comparison.significant and comparison.p_value is not None and comparison.p_value < 0.01
    assert comparison.to_dict() == {
        "better": "good",
        "worse": "poor",
        "p_value": comparison.p_value,
        "significant": True,
        "method": "paired approximate randomization, Holm-corrected",
    }


def test_false_alarms_stay_near_the_level_when_systems_differ_only_by_noise() -> None:
    # Exchangeable systems: each document's outcome for either system is drawn from the same law.
    rng = np.random.default_rng(RNG_SEED)
    rejections = 0
    for _ in range(200):
        a, b = (mean_units(rng.random(15)) for _ in range(2))
        test = paired_test(MeanOf(), a, b, "mean", trials=500, seed=int(rng.integers(1 << 30)))
        assert test is not None
        rejections += test.p_value <= 0.05
    assert rejections / 200 <= 0.08


def test_p_values_agree_with_scipy_permutation_test_on_a_difference_of_means() -> None:
    rng = np.random.default_rng(RNG_SEED)
    x = rng.normal(0.5, 0.2, 25)
    y = x - 0.03 + rng.normal(0, 0.1, 25)
    ours = paired_test(MeanOf(), mean_units(x), mean_units(y), "mean", trials=20_000)
    theirs = scipy_stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(a, axis=axis) - np.mean(b, axis=axis),
        permutation_type="samples",
        n_resamples=20_000,
        alternative="two-sided",
        rng=np.random.default_rng(4),
    )
    assert ours is not None
    assert ours.difference == pytest.approx(theirs.statistic)
    assert 0.005 < theirs.pvalue < 0.5  # a case where the p-value is neither 0 nor 1
    assert ours.p_value == pytest.approx(theirs.pvalue, abs=0.01)


def test_vectorized_and_generic_paths_give_the_same_p_value() -> None:
    rng = np.random.default_rng(RNG_SEED)
    a, b = _system(rng, 12, 0.6), _system(rng, 12, 0.5)
    fast = paired_test(MicroF1(), a, b, "f1", trials=300)
    slow = paired_test(MicroF1(vectorized=False), a, b, "f1", trials=300)
    assert fast is not None and slow is not None
    assert fast.p_value == slow.p_value and fast.difference == pytest.approx(slow.difference)


def test_undefined_trials_are_left_out() -> None:
    # Documents without anything to find: a system predicting nothing on them has an undefined F1 there.
    a = count_units([[0, 0, 0], [0, 0, 0], [2, 2, 2]])
    b = count_units([[0, 1, 0], [0, 1, 0], [0, 0, 2]])
    test = paired_test(MicroF1(), a, b, "f1", trials=400)
    assert test is not None and test.undefined == 0  # swapping keeps the gold, so F1 stays defined
    c = count_units([[0, 0, 0], [0, 0, 0]])
    assert paired_test(MicroF1(), c, dict(c), "f1") is None  # no F1 at all: nothing to compare


def test_systems_on_different_units_are_not_compared() -> None:
    a = mean_units([0.1, 0.9, 0.5])
    b = {f"x{k}": v for k, v in mean_units([0.1, 0.9, 0.5]).items()}
    assert paired_test(MeanOf(), a, b, "mean") is None
    comparisons = compare_neighbours(MeanOf(), [("a", a), ("b", b), ("c", None)], "mean")
    assert [(c.p_value, c.significant) for c in comparisons] == [(None, False), (None, False)]
    # Pairs that could not be compared cannot be claimed tied.
    assert tied_groups(["a", "b", "c"], comparisons) == [["a"], ["b"], ["c"]]


def test_holm_step_down_by_hand() -> None:
    # Sorted 0.01, 0.02, 0.04 of three tests: 3 * 0.01, max(0.03, 2 * 0.02), max(0.04, 1 * 0.04).
    assert holm([0.04, 0.01, None, 0.02]) == pytest.approx([0.04, 0.03, None, 0.04])  # type: ignore[arg-type]
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([]) == []


def test_groups_split_where_neighbours_differ_significantly() -> None:
    def comparison(better: str, worse: str, significant: bool) -> Comparison[str]:
        return Comparison(better, worse, 0.1, 0.01, 0.01 if significant else 0.5, significant, 1000)

    comparisons = [comparison("a", "b", False), comparison("b", "c", True), comparison("c", "d", False)]
    assert tied_groups(["a", "b", "c", "d"], comparisons) == [["a", "b"], ["c", "d"]]
    assert tied_groups(["a"], []) == [["a"]]


def test_a_board_of_three_levels_forms_three_groups() -> None:
    rng = np.random.default_rng(RNG_SEED)
    gold = documents(rng, 60, 0.0)[:, 1:]
    best = np.minimum(gold[:, 0], gold[:, 1])

    def system(share: float, jitter: int) -> dict[str, dict[str, object]]:
        correct = np.clip(np.round(best * share) + rng.integers(-jitter, jitter + 1, len(best)), 0, best)
        return count_units(np.column_stack([correct, gold]))

    board = [("a1", system(0.9, 0)), ("a2", system(0.9, 0)), ("b", system(0.5, 0)), ("c", system(0.1, 0))]
    comparisons = compare_neighbours(MicroF1(), board, "f1", seed=5)
    assert [c.significant for c in comparisons] == [False, True, True]
    assert tied_groups([k for k, _ in board], comparisons) == [["a1", "a2"], ["b"], ["c"]]
    # Enough trials for Holm's smallest corrected p-value to pass the threshold on a large board.
    assert trials_for(3) == 1000 and trials_for(59) * 0.05 >= 4 * 59


def test_a_board_tests_each_pair_as_it_would_be_tested_alone() -> None:
    # compare_neighbours puts every vectorized pair through one product per chunk of trials; each pair's
    # raw p-value is still what its own test gives, with the same coin flips.
    rng = np.random.default_rng(RNG_SEED)
    board = [(k, _system(rng, 20, 0.7 - 0.05 * k)) for k in range(4)]
    comparisons = compare_neighbours(MicroF1(), board, "f1", trials=700, seed=3)
    for (_, a), (_, b), comparison in zip(board, board[1:], comparisons, strict=False):
        alone = paired_test(MicroF1(), a, b, "f1", trials=700, seed=3)
        assert alone is not None and comparison.p_raw == alone.p_value
        assert comparison.difference == pytest.approx(alone.difference)


def test_systems_whose_difference_a_float_cannot_hold_are_not_compared() -> None:
    # A scoring program may report any finite float: 1e308 against -1.7e308 differs by more than a float
    # holds. Such a pair cannot be tested (None), and the rest of the board still is; nothing overflows.
    huge, deep = mean_units([1e308]), mean_units([-1.7e308])
    assert paired_test(MeanOf(), huge, deep, "mean") is None
    board = [("a", huge), ("b", deep), ("c", mean_units([0.4])), ("d", mean_units([0.3]))]
    comparisons = compare_neighbours(MeanOf(), board, "mean")
    assert len(comparisons) == 3
    assert comparisons[0].p_value is None and not comparisons[0].significant
    assert comparisons[2].difference == pytest.approx(0.1) and comparisons[2].p_value is not None
