"""Further boards of a phase, ranked by hand: one metric on a slice, the mean of fractional ranks, the rank of
competition ranks; ties, missing values and the stored form."""

from __future__ import annotations

import pytest

from leaderboard.multi import BoardSpec, metric_ranks, rank_board
from leaderboard.ranking import Entry, Rules, rank
from tests.leaderboard.builders import describe, make_candidate

DIRECTIONS = {"p": True, "r": True, "err": False}


def _entries() -> list[Entry]:
    rows = {
        "ada": ({"p": 0.9, "r": 0.5, "err": 0.3}, {"de": 0.4, "en": 0.9}),
        "bob": ({"p": 0.7, "r": 0.7, "err": 0.1}, {"de": 0.8, "en": 0.6}),
        "cy": ({"p": 0.7, "r": 0.9, "err": 0.2}, {"de": 0.6, "en": 0.2}),
        "dan": ({"p": 0.5, "r": 0.6}, {"en": 0.5}),
    }
    candidates = [
        make_candidate(i, team, i, {"f": 0.9 - 0.1 * i, **m}, columns={"language": {k: {"p": v} for k, v in c.items()}})
        for i, (team, (m, c)) in enumerate(rows.items())
    ]
    return rank(candidates, Rules("f"))


def _table(spec: BoardSpec) -> list[tuple[int, str, float | None]]:
    return [(row.rank, row.entry.candidate.team, row.score) for row in rank_board(spec, _entries(), DIRECTIONS)]


def test_one_metric_on_a_slice() -> None:
    german = BoardSpec("de", "German", ("p",), slice=("language", "de"))
    # dan has no German documents: last.
    assert _table(german) == [(1, "bob", 0.8), (2, "cy", 0.6), (3, "ada", 0.4), (4, "dan", None)]
    lower = BoardSpec("err", "Error", ("err", "p"), by="err")
    assert _table(lower) == [(1, "bob", 0.1), (2, "cy", 0.2), (3, "ada", 0.3), (4, "dan", None)]
    overall = BoardSpec("p", "Precision", ("p",))
    assert _table(overall) == [(1, "ada", 0.9), (2, "bob", 0.7), (2, "cy", 0.7), (4, "dan", 0.5)]


def test_mean_of_fractional_ranks_by_hand() -> None:
    # p: ada 1, bob 2.5, cy 2.5, dan 4; r: cy 1, bob 2, dan 3, ada 4; err: bob 1, cy 2, ada 3, dan 4 (missing).
    # Means: ada (1 + 4 + 3) / 3 = 8/3, bob 5.5/3, cy 5.5/3, dan 11/3.
    rows = rank_board(BoardSpec("all", "All", ("p", "r", "err"), ranking="mean_of_ranks"), _entries(), DIRECTIONS)
    assert [(r.rank, r.entry.candidate.team) for r in rows] == [(1, "bob"), (1, "cy"), (3, "ada"), (4, "dan")]
    assert [r.score for r in rows] == pytest.approx([5.5 / 3, 5.5 / 3, 8 / 3, 11 / 3])
    assert rows[0].ranks == {"p": 2.5, "r": 2.0, "err": 1.0}


def test_rank_of_competition_ranks_by_hand() -> None:
    # p with competition ranks: ada 1, bob 2, cy 2, dan 4; r and err as above. Means: bob 5/3, cy 5/3, ada 8/3.
    rows = rank_board(BoardSpec("all", "All", ("p", "r", "err"), ranking="rank_of_ranks"), _entries(), DIRECTIONS)
    assert [(r.rank, r.entry.candidate.team) for r in rows] == [(1, "bob"), (1, "cy"), (3, "ada"), (4, "dan")]
    assert [r.score for r in rows] == pytest.approx([5 / 3, 5 / 3, 8 / 3, 11 / 3])


def test_metric_ranks_and_the_stored_form() -> None:
    assert metric_ranks([0.5, None, 0.7, 0.5], True, "average") == [2.5, 4.0, 1.0, 2.5]
    assert metric_ranks([0.5, None, 0.7, 0.5], False, "min") == [1.0, 4.0, 3.0, 1.0]
    spec = BoardSpec("de", "German", ("p", "r"), ranking="mean_of_ranks", slice=("language", "de"))
    assert BoardSpec.from_dict(spec.to_dict()) == spec
    with pytest.raises(ValueError, match="unknown ranking"):
        BoardSpec.from_dict({**spec.to_dict(), "ranking": "vibes"})
    assert describe().primary_metric == "mean"  # the builders' scorer, for the page tests
