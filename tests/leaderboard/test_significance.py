"""Paired comparisons: identical systems are never told apart, clearly different ones are; a test of equal means
(agreeing with scipy's paired t-test on means, not assuming the systems exchangeable); too few units are said to
be too few; the correction for a selected best submission; Holm's correction; groups of tied systems."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as scipy_stats

from leaderboard.significance import (
    Comparison,
    compare_neighbours,
    corrected_comparisons,
    holm,
    paired_test,
    tied_groups,
)
from tests.leaderboard.systems import MeanOf, MicroF1, count_units, documents, mean_units

RNG_SEED = 31


def _system(rng: np.random.Generator, n: int, hit_rate: float) -> dict[str, dict[str, object]]:
    return count_units(documents(rng, n, hit_rate))


def test_identical_systems_are_never_significantly_different() -> None:
    rng = np.random.default_rng(RNG_SEED)
    for n in (6, 40):
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
    assert test.p_value is not None and test.p_value < 1e-6
    (comparison,) = compare_neighbours(MicroF1(), [("good", good), ("poor", poor)], "f1")
    assert comparison.significant and comparison.p_value is not None and comparison.p_value < 0.01
    assert comparison.to_dict() == {
        "better": "good",
        "worse": "poor",
        "p_value": comparison.p_value,
        "significant": True,
        "too_few_units": False,
        "method": "paired bootstrap test of equal means, Holm-corrected",
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


def test_p_values_agree_with_scipys_paired_t_test_on_a_difference_of_means() -> None:
    # On a mean, the bootstrap's standard error corrected by sqrt(n / (n - 1)) is the paired t-test's.
    rng = np.random.default_rng(RNG_SEED)
    for n in (8, 25, 60):
        x = rng.normal(0.5, 0.2, n)
        y = x - 0.03 + rng.normal(0, 0.1, n)
        ours = paired_test(MeanOf(), mean_units(x), mean_units(y), "mean", trials=20_000)
        theirs = scipy_stats.ttest_rel(x, y)
        assert ours is not None and ours.p_value is not None
        assert ours.difference == pytest.approx(float(np.mean(x - y)))
        # The standard error is a bootstrap estimate: within about 1% at 20,000 replicates.
        t_ours = float(scipy_stats.t.isf(ours.p_value / 2, n - 1))
        assert t_ours == pytest.approx(abs(float(theirs.statistic)), rel=0.03)


def test_equal_means_with_unlike_errors_are_not_called_different_too_often() -> None:
    # Equal micro F1 (0.6), unlike errors: a precise system (half the mentions, 90% right) and a greedy one (twice
    # as many, finding 90%). Randomization swaps units between them as if exchangeable, and called them different
    # 10% of the time on these draws (20 of 300 here for the test of equal means; 31 for randomization).
    rng = np.random.default_rng(7)
    rejections, runs = 0, 300
    for trial in range(runs):
        gold = 1 + rng.poisson(8, 10)
        predicted_a, predicted_b = np.maximum(1, rng.binomial(gold, 0.5)), rng.poisson(2 * gold)
        a = count_units(np.stack([rng.binomial(predicted_a, 0.9), predicted_a, gold], axis=1))
        b = count_units(np.stack([np.minimum(rng.binomial(gold, 0.9), predicted_b), predicted_b, gold], axis=1))
        test = paired_test(MicroF1(), a, b, "f1", trials=1000, seed=trial)
        assert test is not None and test.p_value is not None
        rejections += test.p_value <= 0.05
    assert rejections / runs <= 0.075


def test_five_units_or_fewer_are_too_few_to_compare_not_tied() -> None:
    # Four systems far apart on five documents: no test can tell them apart on so little, and the board must not
    # claim them tied either.
    board = [(k, mean_units([0.9 - 0.2 * k + 0.01 * i for i in range(5)])) for k in range(4)]
    comparisons = compare_neighbours(MeanOf(), board, "mean")
    assert all(c.too_few and c.p_value is None and not c.significant for c in comparisons)
    assert comparisons[0].to_dict()["too_few_units"] is True
    assert tied_groups([k for k, _ in board], comparisons) == [[0], [1], [2], [3]]
    test = paired_test(MeanOf(), board[0][1], board[3][1], "mean")
    assert test is not None and test.too_few and test.units == 5 and test.difference == pytest.approx(0.6)
    six = paired_test(MeanOf(), mean_units([0.9, 0.8, 0.85, 0.9, 0.95, 0.9]), mean_units([0.1] * 6), "mean")
    assert six is not None and six.p_value is not None and six.p_value < 0.001


def test_a_selected_best_has_its_p_value_multiplied_by_the_submissions_it_was_picked_from() -> None:
    rng = np.random.default_rng(RNG_SEED)
    board = [(k, mean_units(rng.normal(0.6 - 0.05 * i, 0.1, 30))) for i, k in enumerate("abc")]
    plain = compare_neighbours(MeanOf(), board, "mean", seed=2)
    raw = [c.p_raw for c in plain]
    tests = [paired_test(MeanOf(), a, b, "mean", seed=2) for (_, a), (_, b) in itertools.pairwise(board)]
    chosen = corrected_comparisons(list("abc"), tests, trials=2000, selected_from={"a": 5, "b": 1})
    assert [c.p_raw for c in chosen] == raw  # the raw p-values are the tests' own
    assert [c.selected_from for c in chosen] == [5, 1]
    assert [c.p_value for c in chosen] == holm([min(1.0, 5 * raw[0]), raw[1]])  # type: ignore[operator]


def test_vectorized_and_generic_paths_give_the_same_p_value() -> None:
    rng = np.random.default_rng(RNG_SEED)
    a, b = _system(rng, 12, 0.6), _system(rng, 12, 0.5)
    fast = paired_test(MicroF1(), a, b, "f1", trials=300)
    slow = paired_test(MicroF1(vectorized=False), a, b, "f1", trials=300)
    assert fast is not None and slow is not None
    assert fast.p_value == pytest.approx(slow.p_value) and fast.difference == pytest.approx(slow.difference)


def test_undefined_replicates_are_left_out() -> None:
    # Documents without anything to find or predict: a resample of only those has an undefined F1 for a.
    a = count_units([[0, 0, 0]] * 5 + [[2, 2, 2]])
    b = count_units([[0, 1, 0]] * 5 + [[0, 0, 2]])
    test = paired_test(MicroF1(), a, b, "f1", trials=4000)
    assert test is not None and test.p_value is not None
    assert 0 < test.undefined < 4000 * 0.5  # (5/6)^6 of the resamples miss the one document that counts
    c = count_units([[0, 0, 0]] * 6)
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


def test_a_board_tests_each_pair_as_it_would_be_tested_alone() -> None:
    # Pairs with the same strata share their bootstrap draws: each pair's raw p-value on a board is what its
    # own test gives alone.
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
    board = [("a", huge), ("b", deep), ("c", mean_units([0.4] * 6)), ("d", mean_units([0.3, 0.31] * 3))]
    comparisons = compare_neighbours(MeanOf(), board, "mean")
    assert len(comparisons) == 3
    assert comparisons[0].p_value is None and not comparisons[0].significant and not comparisons[0].too_few
    assert comparisons[2].difference == pytest.approx(0.095) and comparisons[2].p_value is not None
