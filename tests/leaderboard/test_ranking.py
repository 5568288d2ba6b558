"""Ranking rules with exact expectations: selection, order, ties, visibility, rule changes."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from datetime import datetime

import pytest

from leaderboard.ranking import Entry, Rules, rank, select_per_team, utc
from tests.leaderboard.builders import T0, describe, make_candidate


def board(entries: list[Entry]) -> list[tuple[int, str, int]]:
    """(rank, team, submission id) per entry: what a reader of the board sees."""
    return [(e.rank, e.candidate.team, e.candidate.submission_id) for e in entries]


F1 = Rules(primary="f1")

# -- which submission counts -----------------------------------------------------------------------


def test_best_takes_the_highest_primary_metric_of_each_team() -> None:
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.50}),
        make_candidate(2, "a", 1, {"f1": 0.70}),
        make_candidate(3, "a", 2, {"f1": 0.60}),
        make_candidate(4, "b", 0, {"f1": 0.65}),
    ]
    assert board(rank(candidates, F1)) == [(1, "a", 2), (2, "b", 4)]


def test_best_between_equal_scores_of_one_team_takes_the_earlier_upload() -> None:
    candidates = [make_candidate(7, "a", 5, {"f1": 0.5}), make_candidate(3, "a", 1, {"f1": 0.5})]
    assert board(rank(candidates, F1)) == [(1, "a", 3)]


def test_latest_takes_the_last_scored_upload_even_when_worse() -> None:
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.90}),
        make_candidate(2, "a", 1, {"f1": 0.40}),
        make_candidate(3, "a", 2, status="failed"),  # later, but never counts
        make_candidate(4, "b", 0, {"f1": 0.50}),
    ]
    assert board(rank(candidates, replace(F1, select="latest"))) == [(1, "b", 4), (2, "a", 2)]


def test_chosen_takes_the_chosen_submission_even_when_worse() -> None:
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.90}),
        make_candidate(2, "a", 1, {"f1": 0.30}, chosen=True),
        make_candidate(3, "a", 2, {"f1": 0.60}),
    ]
    assert board(rank(candidates, replace(F1, select="chosen"))) == [(1, "a", 2)]


def test_chosen_without_a_choice_falls_back_to_the_latest_scored() -> None:
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.90}),
        make_candidate(2, "a", 1, {"f1": 0.30}),
        make_candidate(3, "a", 2, status="running"),
    ]
    assert board(rank(candidates, replace(F1, select="chosen"))) == [(1, "a", 2)]


def test_chosen_but_failed_leaves_the_team_unranked() -> None:
    # Substituting another submission would rank something the team did not choose.
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.90}),
        make_candidate(2, "a", 1, status="failed", chosen=True),
        make_candidate(3, "b", 0, {"f1": 0.10}),
    ]
    rules = replace(F1, select="chosen")
    assert board(rank(candidates, rules)) == [(1, "b", 3)]
    assert select_per_team(candidates, rules)[("a", "")] == (None, 1)


def test_chosen_twice_takes_the_latest_choice() -> None:
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.9}, chosen=True),
        make_candidate(2, "a", 1, {"f1": 0.2}, chosen=True),
    ]
    assert board(rank(candidates, replace(F1, select="chosen"))) == [(1, "a", 2)]


def test_scored_submissions_counts_only_rankable_ones() -> None:
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.5}),
        make_candidate(2, "a", 1, {"f1": 0.6}),
        make_candidate(3, "a", 2, status="failed"),
        make_candidate(4, "a", 3, status="queued"),
    ]
    [entry] = rank(candidates, F1)
    assert (entry.candidate.submission_id, entry.scored_submissions) == (2, 2)


# -- order and ties --------------------------------------------------------------------------------


def test_equal_scores_share_a_rank_and_the_next_rank_skips() -> None:
    # Standard competition ranking: 0.8, 0.8, 0.7, 0.7, 0.6 -> 1, 1, 3, 3, 5.
    candidates = [
        make_candidate(1, "a", 3, {"f1": 0.8}),
        make_candidate(2, "b", 1, {"f1": 0.8}),
        make_candidate(3, "c", 0, {"f1": 0.7}),
        make_candidate(4, "d", 2, {"f1": 0.7}),
        make_candidate(5, "e", 0, {"f1": 0.6}),
    ]
    # Within a tie the earlier upload is listed first (b before a, c before d) without splitting the rank.
    assert board(rank(candidates, F1)) == [(1, "b", 2), (1, "a", 1), (3, "c", 3), (3, "d", 4), (5, "e", 5)]


def test_tied_uploads_at_the_same_moment_are_listed_by_submission_id() -> None:
    candidates = [make_candidate(9, "a", 0, {"f1": 0.5}), make_candidate(4, "b", 0, {"f1": 0.5})]
    assert board(rank(candidates, F1)) == [(1, "b", 4), (1, "a", 9)]


def test_secondary_metrics_break_ties_in_order() -> None:
    rules = Rules(primary="f1", secondary=("precision", "recall"))
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.5, "precision": 0.4, "recall": 0.9}),
        make_candidate(2, "b", 0, {"f1": 0.5, "precision": 0.6, "recall": 0.1}),
        make_candidate(3, "c", 0, {"f1": 0.5, "precision": 0.6, "recall": 0.2}),
        make_candidate(4, "d", 0, {"f1": 0.5, "precision": 0.6, "recall": 0.2}),
    ]
    # b, c, d beat a on precision; c and d beat b on recall; c and d tie on all three.
    assert board(rank(candidates, rules)) == [(1, "c", 3), (1, "d", 4), (3, "b", 2), (4, "a", 1)]


def test_the_primary_metric_listed_again_as_secondary_is_used_once() -> None:
    assert Rules(primary="f1", secondary=("f1", "recall")).ranking_metrics == ("f1", "recall")


def test_lower_is_better_metrics_sort_ascending() -> None:
    rules = Rules(primary="error", secondary=("f1",), higher_is_better={"error": False, "f1": True})
    candidates = [
        make_candidate(1, "a", 0, {"error": 0.30, "f1": 0.1}),
        make_candidate(2, "a", 1, {"error": 0.20, "f1": 0.1}),  # a's best is its lowest error
        make_candidate(3, "b", 0, {"error": 0.10, "f1": 0.5}),
        make_candidate(4, "c", 0, {"error": 0.10, "f1": 0.9}),  # ties b on error, wins on f1
    ]
    assert board(rank(candidates, rules)) == [(1, "c", 4), (2, "b", 3), (3, "a", 2)]


@pytest.mark.parametrize("higher", [True, False])
def test_missing_or_nan_primary_sorts_last_in_either_direction(higher: bool) -> None:
    rules = Rules(primary="f1", higher_is_better={"f1": higher})
    candidates = [
        make_candidate(1, "nan", 0, {"f1": math.nan}),
        make_candidate(2, "missing", 1, {"recall": 0.3}),
        make_candidate(3, "low", 2, {"f1": 0.1}),
        make_candidate(4, "high", 3, {"f1": 0.9}),
    ]
    real = [(1, "high", 4), (2, "low", 3)] if higher else [(1, "low", 3), (2, "high", 4)]
    # NaN and missing compare equal, so they share rank 3 (NaN uploaded first).
    assert board(rank(candidates, rules)) == [*real, (3, "nan", 1), (3, "missing", 2)]


def test_a_value_that_is_not_a_number_counts_as_missing() -> None:
    candidates = [
        make_candidate(1, "bool", 0, {"f1": True}),
        make_candidate(2, "text", 0, {"f1": "0.9"}),  # type: ignore[dict-item]
        make_candidate(3, "real", 0, {"f1": 0.0}),
    ]
    assert board(rank(candidates, F1)) == [(1, "real", 3), (2, "bool", 1), (2, "text", 2)]


def test_the_board_does_not_depend_on_input_order() -> None:
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.5}),
        make_candidate(2, "b", 1, {"f1": 0.5}),
        make_candidate(3, "a", 2, {"f1": 0.5}),
        make_candidate(4, "c", 0, {"f1": 0.7}),
        make_candidate(5, "d", 0, {"f1": math.nan}),
    ]
    expected = [(1, "c", 4), (2, "a", 1), (2, "b", 2), (4, "d", 5)]
    for order in itertools.permutations(candidates):
        assert board(rank(order, F1)) == expected


def test_naive_times_are_taken_as_utc_and_mix_with_aware_ones() -> None:
    naive = replace(make_candidate(1, "a", 0, {"f1": 0.5}), submitted_at=datetime(2024, 5, 1, 11, 0))
    aware = make_candidate(2, "b", 0, {"f1": 0.5})  # 12:00 UTC
    assert utc(naive.submitted_at) == T0.replace(hour=11)
    assert board(rank([aware, naive], F1)) == [(1, "a", 1), (1, "b", 2)]


# -- who is ranked ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["queued", "running", "failed"])
def test_unscored_entries_are_never_ranked(status: str) -> None:
    # Even if a stale score were attached, only status "scored" counts.
    candidates = [make_candidate(1, "a", 0, {"f1": 0.99}, status=status), make_candidate(2, "b", 0, {"f1": 0.1})]
    assert board(rank(candidates, F1)) == [(1, "b", 2)]


def test_hidden_scores_are_never_ranked() -> None:
    # A hidden phase: the service passes metrics=None for scores the viewer may not see.
    candidates = [make_candidate(1, "a", 0, None), make_candidate(2, "b", 0, None)]
    assert rank(candidates, F1) == []
    assert select_per_team(candidates, F1) == {("a", ""): (None, 0), ("b", ""): (None, 0)}


def test_baselines_are_ranked_among_teams_and_marked_one_entry_per_system() -> None:
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.6}),
        make_candidate(2, "organizers", 0, {"f1": 0.5}, baseline=True, system="bm25"),
        make_candidate(3, "organizers", 0, {"f1": 0.7}, baseline=True, system="minilm"),
        make_candidate(4, "organizers", 1, {"f1": 0.4}, baseline=True, system="bm25"),  # worse run of bm25
    ]
    entries = rank(candidates, F1)
    assert [(e.rank, e.candidate.system, e.candidate.baseline) for e in entries] == [
        (1, "minilm", True),
        (2, "a-system", False),
        (3, "bm25", True),
    ]
    assert entries[2].candidate.submission_id == 2


# -- the board is computed, never kept -------------------------------------------------------------


def test_changing_the_rule_reorders_the_board() -> None:
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.9}),
        make_candidate(2, "a", 2, {"f1": 0.2}),
        make_candidate(3, "b", 1, {"f1": 0.5}),
    ]
    assert board(rank(candidates, F1)) == [(1, "a", 1), (2, "b", 3)]
    assert board(rank(candidates, replace(F1, select="latest"))) == [(1, "b", 3), (2, "a", 2)]


def test_changing_the_primary_metric_reorders_the_board() -> None:
    candidates = [
        make_candidate(1, "a", 0, {"f1": 0.9, "recall": 0.1}),
        make_candidate(2, "b", 0, {"f1": 0.1, "recall": 0.9}),
    ]
    assert board(rank(candidates, Rules("recall"))) == [(1, "b", 2), (2, "a", 1)]


def test_rescoring_changes_the_board() -> None:
    first = [make_candidate(1, "a", 0, {"f1": 0.9}), make_candidate(2, "b", 0, {"f1": 0.5})]
    rescored = [replace(first[0], metrics={"f1": 0.4}), first[1]]
    assert board(rank(first, F1)) == [(1, "a", 1), (2, "b", 2)]
    assert board(rank(rescored, F1)) == [(1, "b", 2), (2, "a", 1)]


# -- rules -----------------------------------------------------------------------------------------


def test_rules_refuse_an_unknown_selection_and_an_empty_primary() -> None:
    with pytest.raises(ValueError, match="unknown selection rule 'first'; expected one of best, latest, chosen"):
        Rules("f1", select="first")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="primary metric must be a non-empty string"):
        Rules("")


def test_rules_from_a_scorer_description() -> None:
    rules = Rules.from_description(describe(), select="latest")
    assert rules == Rules("mean", ("error",), {"mean": True, "error": False}, "latest")


def test_candidate_rankable_needs_status_scored_and_visible_metrics() -> None:
    scored = make_candidate(1, "a", 0, {"f1": 0.5})
    assert scored.rankable
    assert not replace(scored, metrics=None).rankable
    assert not replace(scored, status="failed").rankable
