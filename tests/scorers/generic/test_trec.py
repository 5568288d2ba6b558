"""The ``trec`` scorer: trec_eval's ranking, options and averaging on cases worked out by hand and on random ones."""

from __future__ import annotations

import io
import math
import random
import zipfile
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers import InvalidSubmission, OptionsError, get_scorer
from tests.scorers.generic import trec_oracle

QRELS = b"""q1 0 a 1
q1 0 b 0
q1 0 c 2
q1 0 d -1
q2 0 x 1
q2 0 y 1
q3 0 z 1
"""


def run_text(rows: list[tuple[str, str, float]], *, seed: int = 0) -> bytes:
    """A run file with varied but well-formed layout: spaces or tabs, CRLF, extra columns, ranks that lie."""
    rng = random.Random(seed)
    lines = []
    for query, docno, score in rows:
        sep = rng.choice([" ", "\t", "  ", " \t "])
        extra = rng.choice(["", " extra columns", "\tx"])
        lines.append(f"{query}{sep}Q0{sep}{docno}{sep}{rng.randint(0, 9)}{sep}{score!r}{sep}tag{extra}")
    ending = rng.choice(["\n", "\r\n"])
    return (ending.join(lines) + rng.choice(["", ending, ending + "\n  \n"])).encode()


def score(run: bytes, qrels: bytes = QRELS, **options: Any) -> Any:
    measures = options.pop("measures", trec_oracle.COUNTS + trec_oracle.MEASURES)
    return get_scorer("trec", {"measures": measures, "per_query": True, **options}).score(qrels, run)


def test_ties_go_to_the_larger_docno_whatever_the_rank_column_says() -> None:
    # a (relevant) and b tie: trec_eval ranks b first (docno descending), so a is at rank 2.
    report = score(b"q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\n")
    assert report.breakdown["query"]["q1"]["recip_rank"] == 0.5
    # Byte order: "a" (0x61) is above "B" (0x42), so a comes first.
    assert score(b"q1 Q0 B 1 1.0 t\nq1 Q0 a 2 1.0 t\n").breakdown["query"]["q1"]["recip_rank"] == 1.0
    # The rank column is ignored: a higher score wins whatever rank a line claims.
    assert score(b"q1 Q0 a 9 2.0 t\nq1 Q0 b 1 1.0 t\n").breakdown["query"]["q1"]["recip_rank"] == 1.0


def test_scores_equal_as_c_floats_tie() -> None:
    assert score(b"q1 Q0 a 1 1.000000000001 t\nq1 Q0 b 2 1 t\n").breakdown["query"]["q1"]["P_1"] == 0.0
    assert score(b"q1 Q0 a 1 1.000001 t\nq1 Q0 b 2 1 t\n").breakdown["query"]["q1"]["P_1"] == 1.0


def test_unknown_run_queries_are_ignored_and_missing_ones_count_only_with_complete_queries() -> None:
    run = b"q1 Q0 a 1 3 t\nq2 Q0 x 1 3 t\nq2 Q0 n 2 2 t\nq9 Q0 a 1 1 t\n"
    plain = score(run).metrics
    # q1: a relevant at rank 1 of R=2 (a, c) -> AP 1/2; q2: x at rank 1 of R=2 -> AP 1/2; q3 left out.
    assert plain["num_q"] == 2 and plain["map"] == 0.5 and plain["num_rel"] == 4
    complete = score(run, complete_queries=True)
    # q3 counts 0; num_rel counts the judgements above 0 of all queries (a, c, x, y, z).
    assert complete.metrics["num_q"] == 3 and complete.metrics["map"] == pytest.approx(1 / 3, abs=1e-15)
    assert complete.metrics["num_rel"] == 5
    assert complete.metrics["gm_map"] == pytest.approx(math.exp((2 * math.log(0.5) + math.log(1e-5)) / 3), abs=1e-15)
    assert complete.breakdown["query"]["q3"]["map"] == 0.0 and complete.units["q3"]["missing"]


def test_graded_relevance_and_the_relevance_level() -> None:
    run = b"q1 Q0 c 1 3 t\nq1 Q0 a 2 2 t\n"
    # Level 1: a and c relevant (R = 2), both found -> AP 1. Level 2: only c (grade 2) counts.
    assert score(run).metrics["map"] == 1.0
    level2 = score(run, relevance_level=2).metrics
    assert level2["map"] == 1.0 and level2["num_rel"] == 1 and level2["P_2"] == 0.5


def test_judged_docs_only_drops_unjudged_and_negative_documents_after_the_cut() -> None:
    # n is not in the qrels, d is judged -1 ("in the pool, unjudged"): -J drops both, so a moves to rank 1.
    run = b"q1 Q0 n 1 9 t\nq1 Q0 d 2 8 t\nq1 Q0 a 3 7 t\n"
    assert score(run).breakdown["query"]["q1"]["recip_rank"] == pytest.approx(1 / 3, abs=1e-15)
    judged = score(run, judged_docs_only=True).breakdown["query"]["q1"]
    assert judged["recip_rank"] == 1.0 and judged["num_ret"] == 1
    # -M cuts first (n, d kept), then -J drops them: nothing is left.
    both = score(run, judged_docs_only=True, max_docs_per_query=2).breakdown["query"]["q1"]
    assert both["num_ret"] == 0 and both["map"] == 0.0


def test_max_docs_per_query_cuts_after_the_tie_breaking() -> None:
    # All tie: the order is c, b, a (docno descending); -M 1 keeps c only (relevant, grade 2).
    run = b"q1 Q0 a 1 1 t\nq1 Q0 b 2 1 t\nq1 Q0 c 3 1 t\n"
    cut = score(run, max_docs_per_query=1).breakdown["query"]["q1"]
    assert cut["num_ret"] == 1 and cut["num_rel_ret"] == 1 and cut["P_1"] == 1.0


def test_geometric_means_use_trec_evals_floor() -> None:
    run = b"q1 Q0 b 1 1 t\nq2 Q0 x 1 1 t\n"  # q1 finds nothing relevant: AP 0, counted as 1e-5
    report = score(run)
    assert report.metrics["gm_map"] == pytest.approx(math.sqrt(1e-5 * 0.5), rel=1e-12)
    assert report.breakdown["query"]["q1"]["gm_map"] == pytest.approx(1e-5, rel=1e-12)


def test_a_parameterised_measure_twice_with_different_parameters() -> None:
    run = b"q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 n 3 1 t\n"
    both = score(run, measures=["utility", "utility_2,-1,0,0", "ndcg", "ndcg_1=3,2=9"]).metrics
    # utility = a*rel_ret + b*nonrel_ret + c*rel_not_ret + d*nonrel_not_ret: 1 relevant (a), 2 not (b, n).
    assert both["utility"] == -1.0 and both["utility_2,-1,0,0"] == 0.0
    assert both["ndcg"] == score(run, measures=["ndcg"]).metrics["ndcg"]
    assert both["ndcg_1=3,2=9"] == score(run, measures=["ndcg_1=3,2=9"]).metrics["ndcg_1=3,2=9"] != both["ndcg"]


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]], dict[str, Any], int]:
    docnos = st.sampled_from(["a", "b", "B", "a#1", "é", "z9", "10", "9"])
    grades = st.sampled_from([-1, 0, 1, 2])
    qrels = draw(
        st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), st.dictionaries(docnos, grades, min_size=1), min_size=1)
    )
    scores = st.sampled_from([0.0, 1.0, 1.0 + 1e-12, 2.5, -3.0, 1e39, 1e300])
    queries = st.sampled_from(["q1", "q2", "q3", "other"])
    run = draw(st.dictionaries(queries, st.dictionaries(docnos, scores, min_size=1), min_size=1))
    if not set(run) & set(qrels):
        run[next(iter(qrels))] = {"a": 1.0}
    options = {
        "relevance_level": draw(st.sampled_from([1, 2])),
        "judged_docs_only": draw(st.booleans()),
        "max_docs_per_query": draw(st.sampled_from([None, 1, 2, 3])),
        "complete_queries": draw(st.booleans()),
    }
    return qrels, run, options, draw(st.integers(0, 1000))


@settings(max_examples=300, deadline=None)
@given(cases())
def test_random_cases_agree_with_an_independent_reading_of_trec_eval(case: Any) -> None:
    qrels, run, options, seed = case
    qrels_text = "".join(f"{q} 0 {d} {r}\n" for q, judged in qrels.items() for d, r in judged.items()).encode()
    rows = [(q, d, s) for q, candidates in run.items() for d, s in candidates.items()]
    random.Random(seed).shuffle(rows)  # the order of lines plays no part
    report = score(run_text(rows, seed=seed), qrels_text, **options)
    averages, per_query = trec_oracle.evaluate(
        qrels,
        run,
        level=options["relevance_level"],
        judged_only=options["judged_docs_only"],
        keep=options["max_docs_per_query"],
        complete=options["complete_queries"],
    )
    assert report.metrics == pytest.approx(averages, abs=1e-12)
    for query, values in per_query.items():
        printed = {**values, "gm_map": math.exp(values["gm_map"])}
        assert report.breakdown["query"][query] == pytest.approx(printed, abs=1e-12), query


def test_the_report_is_the_same_however_queries_are_grouped_for_pytrec_eval(monkeypatch: pytest.MonkeyPatch) -> None:
    """Evaluators of a few queries' judgements, each fed batches of a few documents: every way of cutting a run and
    its qrels into them (one query a batch, batches across evaluators, one of each) gives the same report."""
    from scorers.generic import trec

    rng = random.Random(7)
    queries = [f"q{i}" for i in range(12)]
    qrels = "".join(f"{q} 0 d{d} {rng.choice([-1, 0, 1, 2])}\n" for q in queries for d in rng.sample(range(40), 9))
    rows = [(q, f"d{d}", float(rng.randint(0, 9))) for q in [*queries, "unjudged"] for d in rng.sample(range(40), 25)]
    reports = []
    for batch, judgements in [(1, 1), (30, 20), (60, 1), (10**9, 10**9)]:
        monkeypatch.setattr(trec, "BATCH_DOCUMENTS", batch)
        monkeypatch.setattr(trec, "EVALUATOR_JUDGEMENTS", judgements)
        for complete in (False, True):
            reports.append((complete, score(run_text(rows), qrels.encode(), complete_queries=complete).to_dict()))
    assert [r for c, r in reports if c] == [reports[1][1]] * 4
    assert [r for c, r in reports if not c] == [reports[0][1]] * 4


def test_a_query_named_no_query_scores_as_under_any_other_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """trec_eval's name for "no query prepared yet" is ``no_query``: a query of that name was given another query's
    prepared judgements (a MAP of 4.0) or none, alone in an evaluator or after another query."""
    from scorers.generic import trec

    rows = [("no_query", "b", 3.0), ("no_query", "a", 2.0), ("no_query", "c", 1.0), ("q2", "x", 1.0)]
    named = QRELS.replace(b"q1 ", b"no_query ")
    for batch in (1, 10**9):
        monkeypatch.setattr(trec, "BATCH_DOCUMENTS", batch)
        report = score(run_text(rows), named).breakdown["query"]
        other = score(run_text([("q1", d, v) for _, d, v in rows[:3]] + rows[3:])).breakdown["query"]
        assert report["no_query"] == other["q1"]
        assert report["no_query"]["map"] == pytest.approx((1 / 2 + 2 / 3) / 2)


# -- what is accepted ----------------------------------------------------------------------------------------


def test_whatever_trec_eval_reads_as_well_formed_is_accepted() -> None:
    reference = score(b"q1 Q0 a 1 3 t\nq1 Q0 b 2 1.5 t\nq1 Q0 c 3 -1 t\n").metrics
    variants = [
        b"q1\tQ0\ta\t1\t3\tt\r\nq1  Q0  b  2  1.5  t\r\nq1 Q0 c 3 -1 t",  # tabs, runs of spaces, CRLF, no last newline
        b"\n   \nq1 Q0 a 1 3.0E+00 t extra\n\t\nq1 Q0 b 2 +1.5 t\nq1 Q0 c 3 -1e0 t\n",  # blank lines, extra column
        b"# a comment line\nq1 Q0 a 1 0x1.8p1 t\n  # another\nq1 Q0 b 2 1.50 t\nq1 Q0 c 3 -.1e1 t\n",  # comments, hex
        b"\xef\xbb\xbfq1 Q0 a 1 3 t\nq1 Q0 c 3 -1 t\nq1 Q0 b 2 1.5 t\n",  # byte-order mark, any line order
    ]
    for variant in variants:
        assert score(variant).metrics == reference, variant
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("run.txt", variants[0])
    assert score(buffer.getvalue()).metrics == reference


def test_a_hash_inside_a_docno_is_part_of_it() -> None:
    qrels = b"q1 0 doc#1 1\nq1 0 doc 0\n"
    assert score(b"q1 Q0 doc#1 1 2 t\nq1 Q0 doc 2 1 t\n", qrels).metrics["map"] == 1.0


# -- what is refused ---------------------------------------------------------------------------------------


def refused(run: bytes, **options: Any) -> list[str]:
    with pytest.raises(InvalidSubmission) as caught:
        score(run, **options)
    return [str(p) for p in caught.value.problems]


def test_garbage_trec_eval_would_read_silently_is_refused_with_its_line() -> None:
    assert refused(b"q1 Q0 a 1 abc t\n") == ["line 1: score 'abc' is not a number"]
    assert refused(b"q1 Q0 a 1 3 t\n\nq1 Q0 b 2 1.5x t\n") == ["line 3: score '1.5x' is not a number"]
    assert refused(b"q1 Q0 a 1 NaN t\n")[0].startswith("line 1: score 'NaN' is refused")
    assert refused(b"q1 Q0 a 1 -inf t\n")[0].startswith("line 1: score '-inf' is refused")
    assert refused(b"q1 Q0 a 1 1e999 t\n") == ["line 1: score '1e999' is too large (it overflows to infinity)"]
    assert refused(b"q1 Q0 a 1 1_0 t\n") == ["line 1: score '1_0' is not a number"]
    assert refused(b"q1 Q0 a 1 3\n") == ["line 1: has 5 field(s); a run line is: query Q0 docno rank score run_tag"]


def test_a_docno_ranked_twice_for_a_query_is_refused_even_beyond_the_cut() -> None:
    run = b"q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 a 1 3 t\nq1 Q0 a 3 1 t\n"
    assert refused(run, max_docs_per_query=1) == ["line 4: docno 'a' is ranked again for query 'q1' (first at line 1)"]


def test_problems_of_many_lines_are_listed_together() -> None:
    problems = refused(b"q1 Q0 a 1 x t\nq1 Q0 b 2 y t\nq1 Q0 c\n")
    assert problems == [
        "line 1: score 'x' is not a number",
        "line 2: score 'y' is not a number",
        "line 3: has 3 field(s); a run line is: query Q0 docno rank score run_tag",
    ]


def test_text_that_is_not_utf8_or_holds_nul_is_refused() -> None:
    assert refused(b"q1 Q0 a 1 1 t\nq1 Q0 \xff 2 1 t\n") == ["line 2: is not UTF-8 text (save the file as UTF-8)"]
    assert refused(b"q1 Q0 a 1 1 t\nq1 Q0 a\x00b 2 1 t\n") == ["line 2: holds a NUL byte"]


def test_empty_runs_and_runs_of_other_queries_are_refused() -> None:
    assert refused(b"\n  \n# nothing\n") == [
        "the run has no result line (expected lines: query Q0 docno rank score run_tag)"
    ]
    assert refused(b"301 Q0 a 1 1 t\n") == ["none of the run's 1 queries is in the phase's query list (first: '301')"]


def test_unknown_and_missing_queries_are_refused_when_asked() -> None:
    run = b"q1 Q0 a 1 1 t\nq7 Q0 a 1 1 t\nq7 Q0 b 1 1 t\nq8 Q0 a 1 1 t\n"
    assert refused(run, reject_unknown_queries=True) == [
        "line 2: query 'q7' is not in the phase's query list",
        "line 4: query 'q8' is not in the phase's query list",
    ]
    assert refused(run, require_all_queries=True) == [
        "query 'q2': is in the phase's query list but the run has no line for it",
        "query 'q3': is in the phase's query list but the run has no line for it",
    ]


# -- options ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "key", "message"),
    [
        ({"measures": ["map", "mapp"]}, "measures[1]", "unknown trec_eval measure 'mapp'"),
        ({"measures": ["P"]}, "measures[0]", "measure 'P' needs a cutoff, as in P_5"),
        ({"measures": ["P_0"]}, "measures[0]", "P takes one positive integer cutoff"),
        ({"measures": ["iprec_at_recall_0.1"]}, "measures[0]", "two decimals as trec_eval prints it"),
        ({"measures": ["iprec_at_recall_1.50"]}, "measures[0]", "between 0.00 and 1.00"),
        ({"measures": ["utility_1,2"]}, "measures[0]", "utility takes 4 number(s), not 2"),
        ({"measures": ["ndcg_1=2,1=3"]}, "measures[0]", "a relevance level is given two gains"),
        ({"measures": ["map_5"]}, "measures[0]", "measure 'map' takes no parameter"),
        ({"measures": ["P_5", "map", "map"]}, "measures[2]", "the measure 'map' is listed twice"),
        ({"measures": []}, "measures", "at least one measure"),
        ({"measures": "map"}, "measures", "must be of type list"),
        ({"relevance_level": 0}, "relevance_level", "must be at least 1"),
        ({"max_docs_per_query": 0}, "max_docs_per_query", "null or a positive integer"),
        ({"max_docs_per_query": "10"}, "max_docs_per_query", "null or a positive integer"),
        ({"per_query": "yes"}, "per_query", "must be of type bool"),
        ({"per_query": True, "measure": ["map"]}, None, "unknown option(s) for trec: measure"),
    ],
)
def test_bad_options_are_refused_with_the_reason_and_key(
    options: dict[str, Any], key: str | None, message: str
) -> None:
    with pytest.raises(OptionsError, match=None) as caught:
        get_scorer("trec", options)
    assert caught.value.key == key
    assert message in caught.value.detail
    assert caught.value.located == (f"{key}: {caught.value.detail}" if key else caught.value.detail)


def test_the_measures_are_the_metrics_in_their_order() -> None:
    scorer = get_scorer("trec", {"measures": ["ndcg_cut_10", "map", "num_nonrel_judged_ret"]})
    specs = scorer.measure_specs()
    assert [m.name for m in specs] == ["ndcg_cut_10", "map", "num_nonrel_judged_ret"]
    assert [m.higher_is_better for m in specs] == [True, True, False]
