"""SV-Ident scorers: hand-computed tasks 1 and 2, group averaging, options, subsets, order and the real data."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from scorers import InvalidGold, InvalidSubmission, OptionsError, get_scorer
from scorers.tasks.svident import SvIdentDetection, SvIdentDisambiguation
from tests.conftest import require_shared
from tests.scorers.tasks.svident_data import DETECTION_GOLD, DETECTION_RUN, RANKING_GOLD, RANKING_RUN, dumps, make_gold

# -- Task 1 ---------------------------------------------------------------------------------------


def test_detection_hand_computed() -> None:
    # The arithmetic is written next to DETECTION_GOLD in svident_data.py.
    report = get_scorer("svident-detection").score(DETECTION_GOLD, dumps(DETECTION_RUN))
    assert report.metrics == pytest.approx({"precision": 17 / 24, "recall": 11 / 16, "f1": 41 / 60}, abs=1e-15)
    language = report.breakdown["language"]
    assert list(language) == ["de", "en"]
    assert language["en"] == pytest.approx({"precision": 5 / 12, "recall": 3 / 8, "f1": 11 / 30}, abs=1e-15)
    assert language["de"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert report.breakdown["document"]["en/d2"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert list(report.breakdown["document"]) == ["de/d3", "en/d1", "en/d2"]
    assert report.units["en/d1"]["sentences"] == 4


def test_a_group_of_one_sentence_weighs_as_much_as_a_big_one() -> None:
    # en/big: 40 sentences, all right -> 1; en/one: 1 sentence, wrong -> 0; the en (and overall) F1 is 1/2,
    # where pooling the 41 sentences would give 40/41 (label 1: P 1, R 20/21; label 0: P 20/21, R 1; F 40/41 each).
    rows = [(f"b{i}", "en", "big", str(i % 2), "v" if i % 2 else "") for i in range(40)]
    rows.append(("lonely", "en", "one", "1", "v"))
    run = {uuid: label for uuid, _, _, label, _ in rows} | {"lonely": "0"}
    report = get_scorer("svident-detection").score(make_gold(rows), dumps(run))
    assert report.metrics["f1"] == 0.5
    by_group = get_scorer("svident-detection", {"average_by": "group"}).score(make_gold(rows), dumps(run))
    assert by_group.metrics["f1"] == 0.5  # one language: the same two groups


def test_detection_options() -> None:
    run = dumps(DETECTION_RUN)
    # micro = accuracy per group: en/d1 3/4, en/d2 0, de/d3 1 -> en 3/8 -> (3/8 + 1) / 2 = 11/16.
    micro = get_scorer("svident-detection", {"average": "micro"}).score(DETECTION_GOLD, run)
    assert micro.metrics["f1"] == 11 / 16
    # average_by "group": plain mean of the three groups: F (11/15 + 0 + 1) / 3 = 26/45.
    by_group = get_scorer("svident-detection", {"average_by": "group"}).score(DETECTION_GOLD, run)
    assert by_group.metrics["f1"] == pytest.approx(26 / 45, abs=1e-15)
    with pytest.raises(OptionsError, match="must be one of macro, weighted, micro, binary"):
        get_scorer("svident-detection", {"average": "samples"})
    with pytest.raises(OptionsError, match="must be one of language, group"):
        get_scorer("svident-detection", {"average_by": "document"})


def test_string_and_integer_labels_score_alike() -> None:
    as_strings = {k: str(v) for k, v in DETECTION_RUN.items()}
    as_integers = {k: int(v) for k, v in DETECTION_RUN.items()}
    scorer = get_scorer("svident-detection")
    assert scorer.score(DETECTION_GOLD, dumps(as_strings)) == scorer.score(DETECTION_GOLD, dumps(as_integers))


@pytest.mark.parametrize(
    ("run", "message"),
    [
        (DETECTION_RUN | {"u1": "2"}, 'key "u1": label "2" is not one of "0", "1", 0, 1'),
        (DETECTION_RUN | {"u1": 0.5}, 'key "u1": label 0.5 is not one of "0", "1", 0, 1'),
        (DETECTION_RUN | {"u1": 1.0}, 'key "u1": label 1.0 is not one of'),
        (DETECTION_RUN | {"u1": True}, 'key "u1": label true is not one of'),
        (DETECTION_RUN | {"u1": " 1"}, 'key "u1": label " 1" is not one of'),
        (DETECTION_RUN | {"u1": None}, 'key "u1": label null is not one of'),
        (DETECTION_RUN | {"u9": "1"}, 'key "u9": is not a uuid of a gold sentence'),
        ({k: v for k, v in DETECTION_RUN.items() if k != "u5"}, 'key "u5": is missing: every gold sentence needs'),
        ([DETECTION_RUN], "top level: expected one JSON object {uuid: label}"),
    ],
)
def test_detection_refusals(run: Any, message: str) -> None:
    with pytest.raises(InvalidSubmission) as caught:
        get_scorer("svident-detection").score(DETECTION_GOLD, dumps(run))
    assert message in str(caught.value)


def test_detection_refuses_a_repeated_key_and_reports_many_problems_at_once() -> None:
    scorer = get_scorer("svident-detection")
    with pytest.raises(InvalidSubmission, match="appears more than once"):
        scorer.score(DETECTION_GOLD, b'{"u1": "1", "u1": "0"}')
    with pytest.raises(InvalidSubmission) as caught:
        scorer.score(DETECTION_GOLD, dumps({"u1": 7, "zz": "1"}))
    assert caught.value.total == 1 + 1 + 6  # a bad label, an unknown key, six missing uuids


# -- Task 2 ---------------------------------------------------------------------------------------


def test_disambiguation_hand_computed() -> None:
    # The arithmetic is written next to RANKING_GOLD in svident_data.py.
    report = get_scorer("svident-disambiguation").score(RANKING_GOLD, dumps(RANKING_RUN))
    expected = {"map@1": 11 / 48, "map@5": 2 / 3, "map@10": 2 / 3, "map@20": 2 / 3, "r_precision": 9 / 16}
    assert report.metrics == pytest.approx(expected, abs=1e-15)
    assert set(report.units) == {"en/d1", "en/d2", "de/d3"}
    assert report.units["en/d1"]["queries"] == 2
    assert report.breakdown["language"]["en"] == pytest.approx(
        {"map@1": 1 / 8, "map@5": 1 / 3, "map@10": 1 / 3, "map@20": 1 / 3, "r_precision": 1 / 8}
    )
    assert report.breakdown["document"]["en/d2"] == dict.fromkeys(expected, 0.0)


def test_ties_are_broken_as_trec_eval_breaks_them_not_by_position() -> None:
    # q2's c and x tie: trec_eval puts x (the larger id) first whatever the order in the file, so q2 scores 0 at
    # rank 1 (the official script, which keeps insertion order, would put c first and score 1).
    run = RANKING_RUN | {"q2": {"c": 1.0, "x": 1.0}}
    scorer = get_scorer("svident-disambiguation")
    report = scorer.score(RANKING_GOLD, dumps(run))
    assert report.units["en/d1"]["map@1"] == 0.25  # (q1 1/2 + q2 0) / 2
    flipped = RANKING_RUN | {"q2": {"x": 1.0, "c": 1.0}}
    assert scorer.score(RANKING_GOLD, dumps(flipped)).metrics == report.metrics


def test_disambiguation_options() -> None:
    scorer = get_scorer("svident-disambiguation", {"cutoffs": [10, 2]})
    report = scorer.score(RANKING_GOLD, dumps(RANKING_RUN))
    # q1 AP@2 = (1/1) / 2 = 1/2; q2 1/2; q3 0; q4 AP@2 = 2/3. en/d1 1/2, en/d2 0 -> en 1/4; de 2/3 -> 11/24.
    assert list(report.metrics) == ["map@2", "map@10", "r_precision"]
    assert report.metrics["map@2"] == pytest.approx(11 / 24, abs=1e-15)
    for bad, message in [
        ([1, 5], "must include 10"),
        ([10, 10], "distinct positive integers"),
        ([0, 10], "distinct positive integers"),
        ([True, 10], "distinct positive integers"),
        ("10", "must be of type list"),
    ]:
        with pytest.raises(OptionsError, match=message):
            get_scorer("svident-disambiguation", {"cutoffs": bad})
    with pytest.raises(OptionsError, match="unknown option"):  # refusing a missing query would leak the answers
        get_scorer("svident-disambiguation", {"missing_queries": "refuse"})


def test_a_missing_query_scores_zero_as_an_empty_list_does() -> None:
    # Refusing a run that leaves out a query would tell participants which sentences are queries (the Task 1
    # answers), so a missing query is scored: 0 on every measure, like q3's {} in RANKING_RUN.
    scorer = get_scorer("svident-disambiguation")
    full = scorer.score(RANKING_GOLD, dumps(RANKING_RUN))
    incomplete = {k: v for k, v in RANKING_RUN.items() if k != "q3"}
    assert scorer.score(RANKING_GOLD, dumps(incomplete)) == full
    # A whole group left out (the official script skips it) counts its queries 0; en/d2 was 0 already.
    assert scorer.score(RANKING_GOLD, dumps({k: v for k, v in incomplete.items() if k != "q4"})).breakdown["document"][
        "de/d3"
    ] == dict.fromkeys(full.metrics, 0.0)
    # An empty run is accepted and scores 0 everywhere.
    assert scorer.score(RANKING_GOLD, b"{}").metrics == dict.fromkeys(full.metrics, 0.0)


def test_lists_are_kept_deep_enough_for_r_precision_beyond_the_largest_cutoff() -> None:
    # A query with 30 relevant variables: R-precision looks at rank 30, deeper than the largest cutoff (20). The
    # run ranks 29 relevant variables first, then 10 others, then the last relevant one: R-precision 29/30.
    relevant = [f"v{i}" for i in range(30)]
    gold = make_gold([("q", "en", "d", "1", ";".join(relevant))])
    ranked = [*relevant[:29], *(f"x{i}" for i in range(10)), relevant[29]]
    run = {"q": {variable: float(len(ranked) - rank) for rank, variable in enumerate(ranked)}}
    report = get_scorer("svident-disambiguation").score(gold, dumps(run))
    assert report.metrics["r_precision"] == pytest.approx(29 / 30, abs=1e-15)
    assert report.metrics["map@20"] == pytest.approx(20 / 30, abs=1e-15)


def test_the_gold_is_held_to_the_relevant_variables_limit() -> None:
    # The lists are pruned as they are read, before the gold is consulted, to max(largest cutoff, this limit).
    gold = make_gold([("q", "en", "d", "1", "a;b;c"), ("p", "en", "d", "1", "a")])
    assert get_scorer("svident-disambiguation", {"max_relevant_per_query": 3}).parse_gold(gold).relevant["q"]
    with pytest.raises(InvalidGold) as caught:
        get_scorer("svident-disambiguation", {"max_relevant_per_query": 2}).parse_gold(gold)
    assert [str(p) for p in caught.value.problems] == [
        'line 2: uuid "q" has 3 relevant variables; at most 2 are accepted (option max_relevant_per_query)'
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"q9": {}}, 'key "q9": is not a uuid of a gold sentence'),
        ({"q1": [["a", 1.0]]}, 'key "q1": expected an object {variable_id: score}, not a list'),
        ({"q1": {"a": "0.09"}}, 'key "q1", variable "a": score "0.09" is not a JSON number'),
        ({"q1": {"a": True}}, 'key "q1", variable "a": score true is not a JSON number'),
        ({"q1": {"a": None}}, 'key "q1", variable "a": score null is not a JSON number'),
        ({"q1": {"a": 10**400}}, 'key "q1", variable "a": score 1000'),
        ({"n1": {"a": "high"}}, 'key "n1", variable "a": score "high"'),  # non-queries are validated too
        ({"n3": 5}, 'key "n3": expected an object'),
    ],
)
def test_disambiguation_refusals(change: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSubmission) as caught:
        get_scorer("svident-disambiguation").score(RANKING_GOLD, dumps(RANKING_RUN | change))
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("submission", "message"),
    [
        (b'{"q1": {"a": NaN}, "q2": {}, "q3": {}, "q4": {}}', "NaN is not a JSON number"),
        (b'{"q1": {"a": Infinity}, "q2": {}, "q3": {}, "q4": {}}', "Infinity is not a JSON number"),
        (b'{"q1": {"a": 1e999}, "q2": {}, "q3": {}, "q4": {}}', "overflows to infinity"),
        (b'{"q1": {"a": 1, "a": 2}, "q2": {}, "q3": {}, "q4": {}}', "appears more than once"),
        (b'{"q1": {}, "q1": {}, "q2": {}, "q3": {}, "q4": {}}', "appears more than once"),
        (b"q1\tQ0\ta\t1\t0.9\trun", "not valid JSON"),
        (b"", "the file is empty"),
    ],
)
def test_disambiguation_refusals_of_the_json_text(submission: bytes, message: str) -> None:
    with pytest.raises(InvalidSubmission) as caught:
        get_scorer("svident-disambiguation").score(RANKING_GOLD, submission)
    assert message in str(caught.value)


def test_finite_scores_whose_sum_overflows_are_scores_and_an_infinity_among_them_is_not() -> None:
    # The common case is checked by adding the scores as doubles: a sum past the double range must send the list
    # to the score-by-score check, which accepts it, as it refuses an infinity among finite scores.
    scorer = get_scorer("svident-disambiguation")
    large = {"q1": {"a": 1.5e308, "b": 1.6e308, "c": 1e308}, "q2": {}, "q3": {}, "q4": {}}
    assert scorer.parse_submission(json.dumps(large).encode(), scorer.public_view(scorer.parse_gold(RANKING_GOLD)))
    with pytest.raises(InvalidSubmission) as caught:
        scorer.score(RANKING_GOLD, b'{"q1": {"a": 1.5e308, "b": -1e308, "c": 1e999}, "q2": {}, "q3": {}, "q4": {}}')
    assert 'key "q1", variable "c": the score is too large (it overflows to infinity)' in str(caught.value)


# -- both tasks: order, subsets, declarations -----------------------------------------------------

CASES = [("svident-detection", DETECTION_GOLD, DETECTION_RUN), ("svident-disambiguation", RANKING_GOLD, RANKING_RUN)]


def _shuffled_gold(gold: bytes, seed: int) -> bytes:
    header, *rows = gold.decode().splitlines()
    random.Random(seed).shuffle(rows)
    return "\n".join([header, *rows]).encode()


@pytest.mark.parametrize(("name", "gold", "run"), CASES)
def test_order_of_gold_rows_and_submission_keys_does_not_matter(name: str, gold: bytes, run: dict[str, Any]) -> None:
    scorer = get_scorer(name)
    first = scorer.score(gold, dumps(run))
    for seed in range(3):
        keys = list(run)
        random.Random(seed).shuffle(keys)
        again = scorer.score(_shuffled_gold(gold, seed), dumps({k: run[k] for k in keys}))
        assert again.metrics == first.metrics
        assert again.breakdown == first.breakdown
        assert again.units == first.units  # read in order (the first) or looked up key by key (the others)


@pytest.mark.parametrize(("name", "gold", "run"), CASES)
def test_a_subset_of_units_scores_like_a_gold_restricted_to_it(name: str, gold: bytes, run: dict[str, Any]) -> None:
    scorer = get_scorer(name)
    parsed_gold = scorer.parse_gold(gold)
    parsed_run = scorer.parse_submission(dumps(run), scorer.public_view(parsed_gold))
    for units in (["en/d1"], ["en/d1", "de/d3"], ["en/d2", "de/d3"]):
        header, *rows = gold.decode().splitlines()
        kept = [row for row in rows if "/".join(row.split("\t")[i] for i in (6, 4)) in units]
        kept_ids = {row.split("\t")[5] for row in kept}
        restricted = scorer.score("\n".join([header, *kept]).encode(), dumps({k: run[k] for k in kept_ids & set(run)}))
        assert scorer.compute(parsed_gold, parsed_run, units=units).metrics == restricted.metrics


def test_declarations() -> None:
    for cls in (SvIdentDetection, SvIdentDisambiguation):
        assert cls.unit == "group"
        assert cls.leaderboard_breakdowns == ("language",)
    assert SvIdentDetection.primary_metric == "f1"
    assert [m.name for m in SvIdentDisambiguation.metrics] == SvIdentDisambiguation().metric_names()


# -- the real release data ------------------------------------------------------------------------


def test_a_document_mixing_languages_splits_into_groups_by_row_language() -> None:
    # Document 12715 has 220 de rows and 1 en row; the en row is gold 1, predicted 0 and forms (en, 12715) alone.
    case = require_shared("conformance", "svident-detection", "train-mixedlang")
    report = get_scorer("svident-detection").score(
        (case / "gold.tsv").read_bytes(), (case / "submission.json").read_bytes()
    )
    assert report.units["en/12715"]["sentences"] == 1
    assert report.breakdown["document"]["en/12715"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert report.units["de/12715"]["sentences"] == 220


def test_the_release_files_are_accepted_as_gold() -> None:
    data = require_shared("data", "svident")
    for name in ("train.tsv", "val.tsv"):
        gold = get_scorer("svident-disambiguation").parse_gold((data / name).read_bytes())
        assert all(gold.relevant.values())
    val = get_scorer("svident-detection").parse_gold((data / "val.tsv").read_bytes())
    assert len(val.label) == 425
    assert len({val.group[u] for u in val.label}) == 30


# -- size limits (Task 2) -------------------------------------------------------------------------


def _refusal(options: dict[str, Any], run: dict[str, Any]) -> str:
    scorer = get_scorer("svident-disambiguation", options)
    with pytest.raises(InvalidSubmission) as caught:
        scorer.parse_submission(dumps(run), scorer.public_view(scorer.parse_gold(RANKING_GOLD)))
    return str(caught.value)


def test_candidates_per_query_limit() -> None:
    # q1 and q4 list 3 candidates each: accepted at a limit of 3, refused at 2.
    scorer = get_scorer("svident-disambiguation", {"max_candidates_per_query": 3})
    assert scorer.score(RANKING_GOLD, dumps(RANKING_RUN)).metrics == pytest.approx(
        {"map@1": 11 / 48, "map@5": 2 / 3, "map@10": 2 / 3, "map@20": 2 / 3, "r_precision": 9 / 16}
    )
    message = _refusal({"max_candidates_per_query": 2}, RANKING_RUN)
    assert 'key "q1": 3 candidates; at most 2 are accepted (option max_candidates_per_query)' in message
    assert 'key "q4": 3 candidates' in message
    assert "2 problems" in message


def test_candidates_per_query_default_limit() -> None:
    scorer = get_scorer("svident-disambiguation")
    gold = scorer.parse_gold(RANKING_GOLD)
    at_limit = RANKING_RUN | {"n1": {f"v{i}": 0.5 for i in range(10_000)}}
    assert "q1" in scorer.parse_submission(dumps(at_limit), scorer.public_view(gold))
    over = RANKING_RUN | {"n1": {f"v{i}": 0.5 for i in range(10_001)}}
    assert 'key "n1": 10001 candidates; at most 10000 are accepted' in _refusal({}, over)


def test_total_candidates_limit() -> None:
    # 3 + 2 + 0 + 3 (queries) + 1 (n1, a non-query, counts too) = 9 candidates in the run.
    scorer = get_scorer("svident-disambiguation", {"max_candidates": 9})
    assert scorer.score(RANKING_GOLD, dumps(RANKING_RUN)).metrics["map@10"] == pytest.approx(2 / 3)
    message = _refusal({"max_candidates": 8}, RANKING_RUN)
    assert message.endswith("top level: 9 candidates in all; at most 8 are accepted (option max_candidates)")


def test_variable_id_length_limit() -> None:
    scorer = get_scorer("svident-disambiguation")
    gold = scorer.parse_gold(RANKING_GOLD)
    longest = "v" * 1000
    accepted = scorer.parse_submission(dumps(RANKING_RUN | {"q2": {"x": 3, longest: 2}}), scorer.public_view(gold))
    assert set(accepted["q2"]) == {"x", longest}
    message = _refusal({}, RANKING_RUN | {"q2": {"x": 3, "w" * 1001: 2}})
    assert 'key "q2", variable "wwwwwwwww' in message
    assert ": 1001 characters; at most 1000 are accepted (option max_variable_chars)" in message
    # One report per list, for its first long id; the ids of RANKING_RUN are 1 character long but for n1's.
    short = _refusal({"max_variable_chars": 4}, RANKING_RUN | {"q2": {"x": 3, "first": 2, "second": 1}})
    assert 'key "q2", variable "first": 5 characters; at most 4 are accepted' in short
    assert 'key "n1", variable "anything": 8 characters; at most 4 are accepted' in short
    assert "second" not in short
    assert "2 problems" in short


def test_an_absurd_run_is_refused_while_it_is_read() -> None:
    # 100,000 candidates for one query (2 MB): refused by parse_submission, before any ranking.
    scorer = get_scorer("svident-disambiguation")
    run = RANKING_RUN | {"q1": {f"var{i}": 1.0 for i in range(100_000)}}
    with pytest.raises(InvalidSubmission) as caught:
        scorer.parse_submission(dumps(run), scorer.public_view(scorer.parse_gold(RANKING_GOLD)))
    assert [str(p) for p in caught.value.problems] == [
        'key "q1": 100000 candidates; at most 10000 are accepted (option max_candidates_per_query)'
    ]


def test_an_absurd_detection_file_is_refused_key_by_key() -> None:
    # Task 1 needs no limit: 50,000 unknown keys cost one look-up each; 20 are listed, all are counted.
    scorer = get_scorer("svident-detection")
    labels = DETECTION_RUN | {f"x{i}": "1" for i in range(50_000)}
    with pytest.raises(InvalidSubmission) as caught:
        scorer.parse_submission(dumps(labels), scorer.public_view(scorer.parse_gold(DETECTION_GOLD)))
    assert caught.value.total == 50_000
    assert len(caught.value.problems) == 20
