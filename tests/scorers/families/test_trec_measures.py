"""trec_eval measure names, the pytrec_eval requests behind them, and trec_eval's averaging over queries."""

from __future__ import annotations

import math

import pytest

from scorers.families import trec_measures
from scorers.families.trec_measures import JUDGED_RELEVANT, Evaluator, _groups, aggregate, parse_measure, parse_measures


@pytest.mark.parametrize(
    ("name", "root", "params"),
    [
        ("map", "map", None),
        ("map_cut_10", "map_cut", "10"),
        ("ndcg", "ndcg", None),
        ("ndcg_cut_5", "ndcg_cut", "5"),
        ("ndcg_rel", "ndcg_rel", None),
        ("ndcg_1=3,2=9,4=4.5", "ndcg", "1=3,2=9,4=4.5"),
        ("Rprec", "Rprec", None),
        ("Rprec_mult_0.20", "Rprec_mult", "0.20"),
        ("num_rel_ret", "num_rel_ret", None),
        ("P_5", "P", "5"),
        ("relative_P_5", "relative_P", "5"),
        ("set_relative_P", "set_relative_P", None),
        ("recall_100", "recall", "100"),
        ("set_recall", "set_recall", None),
        ("iprec_at_recall_0.10", "iprec_at_recall", "0.10"),
        ("utility_2,-1,0,0", "utility", "2,-1,0,0"),
        ("11pt_avg_.25,.5,.75", "11pt_avg", ".25,.5,.75"),
        ("set_F_0.5", "set_F", "0.5"),
        ("gm_map", "gm_map", None),
    ],
)
def test_output_names_resolve_to_their_root_and_parameters(name: str, root: str, params: str | None) -> None:
    assert parse_measure(name) == trec_measures.Measure(name, root, params)


def test_every_numeric_measure_pytrec_eval_offers_is_on_offer() -> None:
    import pytrec_eval

    assert set(trec_measures.names()) == set(pytrec_eval.supported_measures) - {"runid", "relstring"}


def test_cutoffs_share_an_evaluator_and_other_parameter_sets_get_their_own() -> None:
    measures = parse_measures(["P_5", "map", "P_10", "utility", "utility_2,-1,0,0", "ndcg_1=2", "iprec_at_recall_0.50"])
    groups = _groups(measures)
    assert len(groups) == 2
    first, second = groups
    assert first[0] == {"P.5,10", "map", "utility", "ndcg.1=2", "iprec_at_recall.0.50"}
    assert first[1] == {
        "P_5": "P_5",
        "map": "map",
        "P_10": "P_10",
        "utility": "utility",
        "ndcg_1=2": "ndcg",
        "iprec_at_recall_0.50": "iprec_at_recall_0.50",
    }
    assert second == ({"utility.2,-1,0,0"}, {"utility_2,-1,0,0": "utility"})


def test_evaluator_gives_each_name_its_value() -> None:
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}, "unjudged": {"a": 1.0}}
    values = Evaluator(qrels, parse_measures(["P_1", "P_2", "map", "num_ret"])).evaluate(run)
    assert values == {"q": {"P_1": 1.0, "P_2": 0.5, "map": pytest.approx((1 + 2 / 3) / 2), "num_ret": 3.0}}


def test_aggregate_sums_counts_and_takes_geometric_means() -> None:
    measures = parse_measures(["map", "gm_map", "num_ret", "num_rel", "num_q"])
    records = [
        {"map": 0.5, "gm_map": math.log(0.5), "num_ret": 10.0, "num_rel": 2.0, JUDGED_RELEVANT: 3},
        {"map": 0.0, "gm_map": math.log(1e-5), "num_ret": 0.0, "num_rel": 1.0, JUDGED_RELEVANT: 1},
    ]
    plain = aggregate(records, measures)
    assert plain == {
        "map": 0.25,
        "gm_map": pytest.approx(math.sqrt(0.5e-5)),
        "num_ret": 10.0,
        "num_rel": 3.0,
        "num_q": 2.0,
    }
    # trec_eval -c: num_rel counts the judgements above 0 instead; a resample with repeats weighs each copy.
    assert aggregate(records, measures, complete=True)["num_rel"] == 4.0
    assert aggregate([records[0], records[0], records[1]], measures)["map"] == pytest.approx(1 / 3)
    assert aggregate([], measures) == {"map": 0.0, "gm_map": 0.0, "num_ret": 0.0, "num_rel": 0.0, "num_q": 0.0}
