"""trec_eval ranking measures: hand-computed AP@k and R-precision, trec_eval's ties, pruning, missing queries."""

from __future__ import annotations

import random

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers.families.ranking import depth, evaluate, measure_names, prune, prune_lists, top_ranked

CUTS = [1, 3, 5]


def one(relevant: set[str], candidates: dict[str, float], cutoffs: list[int] = CUTS) -> dict[str, float]:
    return evaluate({"q": dict.fromkeys(relevant, 1)}, {"q": candidates}, cutoffs)["q"]


def test_average_precision_cut_at_k_and_r_precision() -> None:
    # Ranking a x b y c with relevant {a, b, c}: precision at the relevant ranks 1, 3, 5 is 1, 2/3, 3/5.
    # AP@1 = 1/3; AP@3 = (1 + 2/3) / 3 = 5/9; AP@5 = (1 + 2/3 + 3/5) / 3 = 34/45; R = 3: top 3 holds 2 -> 2/3.
    got = one({"a", "b", "c"}, {"a": 0.9, "x": 0.8, "b": 0.7, "y": 0.6, "c": 0.5})
    assert got == pytest.approx({"map@1": 1 / 3, "map@3": 5 / 9, "map@5": 34 / 45, "r_precision": 2 / 3}, abs=1e-12)


def test_a_perfect_list_scores_below_one_when_there_are_more_relevant_than_k() -> None:
    # AP@k divides by R = 3, not by min(k, R): AP@1 = 1/3, AP@3 = AP@5 = 1.
    got = one({"a", "b", "c"}, {"a": 3.0, "b": 2.0, "c": 1.0, "x": 0.0})
    assert got == {"map@1": pytest.approx(1 / 3, abs=1e-15), "map@3": 1.0, "map@5": 1.0, "r_precision": 1.0}


def test_ties_are_broken_by_doc_id_in_descending_order() -> None:
    # Equal scores: trec_eval ranks the larger doc id first (strcmp, descending), whatever the order given.
    assert one({"a"}, {"a": 1.0, "b": 1.0})["map@1"] == 0.0  # b, a
    assert one({"a"}, {"b": 1.0, "a": 1.0})["map@1"] == 0.0  # still b, a
    assert one({"c"}, {"c": 1.0, "b": 1.0})["map@1"] == 1.0  # c, b
    assert one({"a"}, {"a": 1.0, "B": 1.0})["map@1"] == 1.0  # "a" > "B" in byte order


def test_scores_are_compared_in_single_precision_as_trec_eval_does() -> None:
    # 1 + 1e-12 is 1.0 as a C float, so it ties with 1.0 and b ranks first; 1 + 1e-6 does not tie.
    assert one({"a"}, {"a": 1.0 + 1e-12, "b": 1.0})["map@1"] == 0.0
    assert one({"a"}, {"a": 1.0 + 1e-6, "b": 1.0})["map@1"] == 1.0
    # Beyond the float range both become +inf: a tie again.
    assert one({"a"}, {"a": 1e300, "b": 1e39})["map@1"] == 0.0


def test_doc_ids_that_trec_eval_cannot_hold_are_ranked_by_code_point() -> None:
    # A NUL would cut a C string short, a lone surrogate crashes pytrec_eval; both are renamed first.
    assert one({"a\x00b"}, {"a\x00b": 1.0, "a\x00c": 1.0}, [1, 2]) == {"map@1": 0.0, "map@2": 0.5, "r_precision": 0.0}
    assert one({"\ud800"}, {"\ud800": 1.0, "z": 1.0}, [1])["map@1"] == 1.0
    assert one({""}, {"": 1.0, "z": 0.5}, [1])["map@1"] == 1.0


def test_missing_and_empty_queries() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}, "q2": {}, "extra": {"a": 1.0}}
    zero = dict.fromkeys(measure_names([1]), 0.0)
    assert evaluate(qrels, run, [1]) == {"q1": {"map@1": 1.0, "r_precision": 1.0}, "q2": zero, "q3": zero}
    # pytrec_eval's own behaviour: a query the run lacks is left out (an empty list still scores 0).
    assert set(evaluate(qrels, run, [1], missing_as_zero=False)) == {"q1", "q2"}
    assert evaluate({}, run, [1]) == {}


def test_judgements_below_one_are_not_relevant() -> None:
    # Relevant {a} only (R = 1): b at rank 1 is judged 0. AP@2 = (1/2) / 1.
    got = evaluate({"q": {"a": 1, "b": 0}}, {"q": {"b": 2.0, "a": 1.0}}, [2])["q"]
    assert got == {"map@2": 0.5, "r_precision": 0.0}


def test_names_depth_and_bad_cutoffs() -> None:
    assert measure_names([20, 1, 10, 10]) == ["map@1", "map@10", "map@20", "r_precision"]
    assert depth([1, 5], 3) == 5
    assert depth([1, 5], 8) == 8
    for bad in ([], [0], [True], [2.0]):
        with pytest.raises(ValueError, match="positive integers"):
            evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, bad)  # type: ignore[arg-type]


def test_prune_keeps_every_candidate_tied_at_the_boundary() -> None:
    assert prune({"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}, 2) == {"a": 3.0, "b": 2.0, "c": 2.0}
    assert prune({"a": 1.0 + 1e-12, "b": 1.0, "c": 0.0}, 1) == {"a": 1.0 + 1e-12, "b": 1.0}
    assert prune({"a": 1.0}, 5) == {"a": 1.0}


# Scores with many exact and single-precision ties, and values at the edges of the float range.
NEAR_TIES = [0.0, -0.0, 1.0, 1.0 + 2**-24, 1.0 + 3 * 2**-24, 1.0 + 2**-22, 16777216, 16777217, 1e39, 1e300, -1e300]
score = st.one_of(st.sampled_from(NEAR_TIES), st.floats(-2, 2, allow_nan=False), st.integers(-3, 3))
doc = st.sampled_from([f"d{i}" for i in range(25)])
query = st.tuples(st.dictionaries(doc, st.just(1), min_size=1, max_size=12), st.dictionaries(doc, score, max_size=25))


@settings(max_examples=200, deadline=None)
@given(st.lists(query, min_size=1, max_size=4), st.lists(st.integers(1, 12), min_size=1, max_size=3, unique=True))
def test_pruning_and_renaming_never_change_what_pytrec_eval_gives_on_the_whole_run(
    queries: list[tuple[dict[str, int], dict[str, float]]], cutoffs: list[int]
) -> None:
    qrels = {f"q{i}": judged for i, (judged, _) in enumerate(queries)}
    run = {f"q{i}": candidates for i, (_, candidates) in enumerate(queries)}
    measures = {f"map_cut.{','.join(map(str, sorted(cutoffs)))}", "Rprec"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    got = evaluate(qrels, run, cutoffs)
    for q, values in got.items():
        for k in cutoffs:
            assert values[f"map@{k}"] == expected[q][f"map_cut_{k}"]
        assert values["r_precision"] == expected[q]["Rprec"]


def test_top_ranked_follows_trec_evals_order() -> None:
    docnos = ["a", "b", "B", "c", "é"]
    scores = np.array([1.0, 1.0, 1.0, 1.0 + 1e-12, 0.5])
    # All but é tie as C floats: docno descending by code point (c > b > a > B), then é with the lower score.
    assert [docnos[i] for i in top_ranked(docnos, scores, 5)] == ["c", "b", "a", "B", "é"]
    assert [docnos[i] for i in top_ranked(docnos, scores, 2)] == ["c", "b"]
    assert top_ranked(docnos, scores, 10) == top_ranked(docnos, scores, 5)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=False, allow_infinity=False),
            st.sampled_from([0.5, 0.1 + 0.2, 0.3, 3.4028235e38, 3.4028236e38, 1e39, -1e39, 1e-46, -0.0, 0.0]),
            st.integers(min_value=-(2**80), max_value=2**80),
        ),
        min_size=1,
        max_size=40,
    ),
    st.integers(min_value=1, max_value=25),
)
def test_the_plain_cut_of_a_small_run_is_numpy_s_cut(scores: list[float], keep: int) -> None:
    # A small run is cut in plain Python (no numpy import), a large one with numpy: the same candidates, order and
    # values, ties at the boundary and scores past the C float range included.
    import scorers.families.ranking as ranking

    candidates = {f"v{i}": score for i, score in enumerate(scores)}
    saved = ranking._pruned
    try:
        ranking._pruned = 0
        plain = ranking.prune(candidates, keep)
        ranking._pruned = ranking.PLAIN_PRUNES
        with np.errstate(over="ignore"):
            with_numpy = ranking.prune(candidates, keep)
    finally:
        ranking._pruned = saved
    assert list(plain.items()) == list(with_numpy.items())
    assert [type(v) for v in plain.values()] == [type(v) for v in with_numpy.values()]


# Lists written best first (most runs), in any order, short and long, with ties and scores past the C float range.
sorted_or_not = st.tuples(st.lists(score, max_size=30), st.sampled_from(["best first", "as drawn", "worst first"]))


def _written(scores: list[float], order: str) -> dict[str, float]:
    if order != "as drawn":
        with np.errstate(over="ignore"):
            scores = sorted(scores, key=lambda s: float(np.float32(s)), reverse=order == "best first")
    return {f"v{i}": s for i, s in enumerate(scores)}


@settings(max_examples=300, deadline=None)
@given(st.lists(sorted_or_not, min_size=1, max_size=8), st.integers(1, 12), st.lists(st.integers(1, 12), min_size=8))
def test_lists_cut_together_are_cut_as_each_alone(
    drawn: list[tuple[list[float], str]], keep: int, keeps: list[int]
) -> None:
    # prune_lists reads the boundary of a list whose scores never rise at its index keep - 1 and finds any other's
    # with np.partition: the same candidates, order, values and types as prune gives each list alone.
    import scorers.families.ranking as ranking

    lists = [_written(scores, order) for scores, order in drawn]
    saved = ranking._pruned
    try:
        for depths in (keep, keeps[: len(lists)]):
            per_list = [depths] * len(lists) if isinstance(depths, int) else depths
            for pruned in (0, ranking.PLAIN_PRUNES):  # in plain Python, then with numpy
                ranking._pruned = pruned
                with np.errstate(over="ignore"):
                    alone = [prune(candidates, k) for candidates, k in zip(lists, per_list, strict=True)]
                    ranking._pruned = pruned
                    together = prune_lists(lists, depths)
                assert [repr(list(c.items())) for c in together] == [repr(list(c.items())) for c in alone]
    finally:
        ranking._pruned = saved


@settings(max_examples=100, deadline=None)
@given(st.lists(query, min_size=1, max_size=4), st.randoms())
def test_the_order_a_list_is_given_in_changes_nothing(
    queries: list[tuple[dict[str, int], dict[str, float]]], rng: random.Random
) -> None:
    # trec_eval sorts each list by score and doc id (distinct), so the renamed lists are given in their ids' order.
    qrels = {f"q{i}": judged for i, (judged, _) in enumerate(queries)}
    run = {f"q{i}": candidates for i, (_, candidates) in enumerate(queries)}
    shuffled = {q: dict(rng.sample(list(c.items()), len(c))) for q, c in run.items()}
    assert evaluate(qrels, shuffled, [1, 3, 10]) == evaluate(qrels, run, [1, 3, 10])


def test_a_query_named_no_query_is_evaluated_as_under_any_other_name() -> None:
    # trec_eval's name for "no query prepared yet", which it returns to after every evaluation (one state for the
    # whole process): a query of that name handed to it would get what trec_eval held, not its own judgements
    # (queries reach it as q0, q1, ...).
    judgements, ranking = {"a": 1, "b": 0, "c": 1}, {"b": 3.0, "a": 2.0, "c": 1.0}
    renamed = evaluate({"nq": judgements}, {"nq": ranking}, [10])
    assert renamed["nq"]["r_precision"] == 0.5
    assert evaluate({"no_query": judgements}, {"no_query": ranking}, [10]) == {"no_query": renamed["nq"]}


float_score = st.one_of(st.sampled_from([0.0, -0.0, 5e-324, 1e300, -3.5e38, 3.4028235e38]), st.floats(-2, 2))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(float_score, max_size=30), sorted_or_not.map(lambda t: t[1])), max_size=8))
def test_kept_lists_give_back_each_list_as_prune_lists_cuts_it(drawn: list[tuple[list[float], str]]) -> None:
    # A run's lists held as one array of ids and one of doubles (KeptLists): each looked up is the dictionary
    # prune_lists gives, ids, order, values and types, cut in plain Python or with numpy, every list cut or not.
    import scorers.families.ranking as ranking

    lists = [_written(scores, order) for scores, order in drawn]
    queries = [f"q{i}" for i in range(len(lists))]
    saved = ranking._pruned
    try:
        for pruned in (0, ranking.PLAIN_PRUNES):
            ranking._pruned = pruned
            with np.errstate(over="ignore"):
                expected = dict(zip(queries, prune_lists(lists, 5), strict=True))
                ranking._pruned = pruned
                kept = ranking.KeptLists()
                kept.add_cut(queries, lists, 5)
            assert repr(kept) == repr(expected) and list(kept) == queries and len(kept) == len(lists)
            assert all(repr(list(kept[q].items())) == repr(list(expected[q].items())) for q in queries)
            assert "q" not in kept and (not queries or queries[0] in kept)
    finally:
        ranking._pruned = saved
    as_given = {"a": 1, "b": 2.5}  # any scores, kept as they are
    kept.add("given", as_given)
    assert kept["given"] is as_given
