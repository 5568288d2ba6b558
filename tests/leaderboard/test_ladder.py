"""The Ladder: a team's shown score moves only when a submission beats it by the paired standard error, rounded
to 1/n; and against the boosting attack of Blum & Hardt its public-private gap is far smaller than a plain
board's."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.ladder import Accuracy, boosting_attack, climb, paired_margin, rounded
from tests.leaderboard.systems import MeanOf, mean_units


def test_the_margin_is_the_standard_error_of_the_paired_differences() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random(40), rng.random(40)
    found = paired_margin(MeanOf(), mean_units(a.tolist()), mean_units(b.tolist()), "mean")
    assert found is not None
    difference, margin = found
    assert difference == pytest.approx(float(np.mean(a - b)))
    assert margin == pytest.approx(float(np.std(a - b, ddof=1) / np.sqrt(40)))
    other = {f"x{i}": {"x": 0.5, "lang": "en"} for i in range(40)}
    assert paired_margin(MeanOf(), mean_units(a.tolist()), other, "mean") is None


def test_the_shown_score_moves_only_past_the_margin() -> None:
    base = np.linspace(0.2, 0.8, 20)
    first = mean_units(base.tolist())
    slightly = mean_units((base + np.where(np.arange(20) % 2, 0.05, -0.04)).tolist())  # +0.005 on average
    clearly = mean_units(np.clip(base + 0.1, 0, 1).tolist())
    worse = mean_units((base - 0.2).tolist())
    rungs = climb(MeanOf(), [("a", first), ("b", slightly), ("c", worse), ("d", clearly)], "mean")
    assert [r.raised for r in rungs] == [True, False, False, True]
    assert rungs[0].shown == rounded(0.5, 20) == 0.5 and rungs[0].margin is None
    assert [r.shown for r in rungs[:3]] == [0.5, 0.5, 0.5]  # the last shown score, again
    assert rungs[1].score == pytest.approx(0.505) and rungs[1].margin is not None and rungs[1].margin > 0.005
    assert rungs[3].shown == rounded(float(np.mean(np.clip(base + 0.1, 0, 1))), 20)
    # A lower-is-better metric must fall by the margin.
    down = climb(MeanOf(), [("a", first), ("c", worse)], "mean", higher_is_better=False)
    assert [r.raised for r in down] == [True, True] and down[1].shown == pytest.approx(0.3)
    # Without units nothing is shown or raised; the shown score stays.
    assert climb(MeanOf(), [("a", None), ("b", first), ("c", None)], "mean")[2].shown == 0.5


def test_rounding_to_one_over_n() -> None:
    assert rounded(0.5124, 100) == 0.51 and rounded(0.5151, 100) == 0.52
    units = mean_units([0.1234] * 7)
    assert climb(MeanOf(), [("a", units)], "mean", round_to_units=False)[0].shown == pytest.approx(0.1234)
    assert climb(MeanOf(), [("a", units)], "mean")[0].shown == pytest.approx(1 / 7)


def test_the_boosting_attack_overfits_a_plain_board_far_more_than_the_ladder() -> None:
    # Random labels: every submission's true accuracy is 0.5. 200 random submissions on 2,000 public units.
    for seed in (0, 1):
        plain, ladder = boosting_attack(200, 2000, 2000, seed=seed)
        assert plain.public > 0.55 and abs(plain.private - 0.5) < 0.03  # the plain board shows a false gain
        assert plain.gap > 0.04
        assert ladder.gap < plain.gap / 2 and ladder.gap < 0.03
        assert ladder.kept < plain.kept  # the ladder told the attacker about far fewer submissions


def test_accuracy_is_a_resamplable_scorer() -> None:
    units = {f"u{i}": {"x": float(i % 2)} for i in range(10)}
    assert Accuracy().aggregate(list(units.values())) == {"accuracy": 0.5}
    assert climb(Accuracy(), [("a", units)], "accuracy")[0].shown == 0.5
