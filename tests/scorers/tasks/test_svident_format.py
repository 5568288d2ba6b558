"""Reading SV-Ident files: the gold TSV's refusals with their lines, and fuzzing of both submission parsers."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorers import InvalidGold, InvalidSubmission, ValidationError, get_scorer
from scorers.families import ranking
from scorers.io import iter_json_object
from scorers.io.json_object import KeyBound
from scorers.tasks.svident_format import RunLimits, parse_gold
from tests.scorers.tasks.svident_data import DETECTION_GOLD, DETECTION_RUN, RANKING_GOLD, RANKING_RUN, make_gold

HEADER_LINE = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang"


def refusal(data: bytes) -> str:
    with pytest.raises(InvalidGold) as caught:
        parse_gold(data)
    return str(caught.value)


def test_gold_reads_the_release_layout() -> None:
    gold = parse_gold(
        make_gold([("u1", "en", "d1", "1", "a; b;;unk"), ("u2", "de", "d2", "1", "unk"), ("u3", "de", "d2", "0", "")])
    )
    assert gold.label == {"u1": 1, "u2": 1, "u3": 0}
    assert gold.group == {"u1": ("en", "d1"), "u2": ("de", "d2"), "u3": ("de", "d2")}
    assert gold.relevant == {"u1": frozenset({"a", "b"})}  # u2 has only unk: not a query


def test_gold_accepts_bom_crlf_blank_lines_quoting_and_any_column_order() -> None:
    text = (
        "\ufefflang\tuuid\tdoc_id\tresearch_data\tvariable\tis_variable\tsentence\textra\r\n"
        '\r\nen\tu1\td1\tZA1\ta\t1\t"A ""quoted""\tsentence\r\nover two lines"\tx\r\n'
    )
    gold = parse_gold(text.encode())
    assert gold.relevant == {"u1": frozenset({"a"})}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty; expected a header row (sentence, is_variable"),
        (HEADER_LINE + "\n", "has a header row but no sentences"),
        (
            "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\n",
            "line 1: the header row lacks the column(s) lang",
        ),
        (HEADER_LINE + "\tlang\n", "line 1: the header row repeats the column(s) lang"),
        (HEADER_LINE + "\nS\t2\t\t\td1\tu1\ten\n", 'line 2: is_variable "2" is not "0" or "1"'),
        (HEADER_LINE + "\nS\t\t\t\td1\tu1\ten\n", 'line 2: is_variable "" is not "0" or "1"'),
        (HEADER_LINE + "\nS\t0\t\t\td1\t\ten\n", "line 2: uuid is empty"),
        (HEADER_LINE + "\nS\t0\t\t\td1\tu1\t\n", "line 2: lang is empty"),
        (HEADER_LINE + "\nS\t0\t\t\td1\tu1\ten/x\n", 'line 2: lang "en/x" contains "/"'),
        (HEADER_LINE + "\nS\t0\t\t\t\tu1\ten\n", "line 2: doc_id is empty"),
        (HEADER_LINE + "\nS\t0\t\t\td1\tu1\n", "line 2: has 6 tab-separated fields; expected 7"),
        (HEADER_LINE + '\nS "x"y\t0\t\t\td1\tu1\ten\n"bad"quote\t0\t\t\td1\tu2\ten\n', "line 3: not a valid TSV row"),
    ],
)
def test_gold_refusals(text: str, message: str) -> None:
    assert message in refusal(text.encode())


def test_gold_refuses_bytes_that_are_not_utf8() -> None:
    assert "is not UTF-8 text" in refusal(HEADER_LINE.encode() + b"\nS\xff\t0\t\t\td1\tu1\ten\n")


def test_repeated_uuids_are_refused_with_the_lines_of_both_rows() -> None:
    # Row 2 spans lines 2-3 (a quoted line break), then a blank line 4: the repeat is on line 5.
    text = HEADER_LINE + '\n"Two\nlines"\t0\t\t\td1\tu1\ten\n\nS\t1\tv\tZA1\td1\tu1\ten\nS\tx\t\t\td1\tu2\ten\n'
    message = refusal(text.encode())
    assert 'line 5: uuid "u1" is repeated; uuids must be unique (first on line 2)' in message
    assert 'line 6: is_variable "x" is not "0" or "1"' in message
    assert "2 problems" in message


def test_a_repeat_names_the_first_row_with_that_uuid_even_one_refused_for_another_reason() -> None:
    # Line 2 has too few fields (not a sentence, so not u1's first line), line 3 a bad label (refused, yet u1's
    # first line), line 4 is u2's first; line 5 repeats u1 (stripped) and line 6 repeats u2.
    text = (
        HEADER_LINE
        + "\nS\t0\t\t\td1\tu1\n"
        + "S\tx\t\t\td1\tu1\ten\n"
        + "S\t0\t\t\td1\tu2\ten\n"
        + "S\t0\t\t\td1\t u1 \ten\n"
        + "S\t1\tv\t\td2\tu2\ten\n"
    )
    for queries in (True, False):
        with pytest.raises(InvalidGold) as caught:
            parse_gold(text.encode(), queries=queries)
        assert [str(problem) for problem in caught.value.problems] == [
            "line 2: has 6 tab-separated fields; expected 7 as in the header",
            'line 3: is_variable "x" is not "0" or "1"',
            'line 5: uuid "u1" is repeated; uuids must be unique (first on line 3)',
            'line 6: uuid "u2" is repeated; uuids must be unique (first on line 4)',
        ]


def test_task_1_reads_the_same_sentences_without_the_queries() -> None:
    rows = [("u1", "en", "d1", "1", "a; b;;unk"), ("u2", "de", "d2", "1", "unk"), ("u3", "de", "d2", "0", "")]
    data = make_gold(rows)
    full, labels_only = parse_gold(data), parse_gold(data, queries=False)
    assert (labels_only.label, labels_only.group) == (full.label, full.group)
    assert list(labels_only.group) == list(labels_only.label) == ["u1", "u2", "u3"]
    assert labels_only.relevant == {}
    assert get_scorer("svident-detection").parse_gold(data) == labels_only


def test_disambiguation_refuses_a_gold_without_queries() -> None:
    gold = make_gold([("u1", "en", "d1", "0", ""), ("u2", "en", "d1", "1", "unk")])
    with pytest.raises(InvalidGold, match="no Task 2 query"):
        get_scorer("svident-disambiguation").parse_gold(gold)
    assert get_scorer("svident-detection").parse_gold(gold).label == {"u1": 0, "u2": 1}


# -- fuzzing --------------------------------------------------------------------------------------

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes_as_gold_are_parsed_or_refused(data: bytes) -> None:
    try:
        parse_gold(data)
    except InvalidGold as exc:
        assert exc.problems


field = st.text(alphabet=st.sampled_from(list('ab01;\t"\r\n /unk\x00é')), max_size=8)
row = st.lists(st.one_of(field, st.sampled_from(["0", "1", "en", "u1", "u2", "a;unk"])), min_size=5, max_size=8)


@FUZZ
@given(st.lists(row, max_size=6), st.booleans())
def test_mangled_gold_tables_are_parsed_or_refused(rows: list[list[str]], quote_all: bool) -> None:
    def cell(value: str) -> str:
        return '"' + value.replace('"', '""') + '"' if quote_all else value

    text = "\n".join([HEADER_LINE, *("\t".join(cell(v) for v in r) for r in rows)])
    for scorer in ("svident-detection", "svident-disambiguation"):
        try:
            get_scorer(scorer).parse_gold(text.encode())
        except InvalidGold as exc:
            assert exc.problems


json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
CASES: dict[str, tuple[bytes, dict[str, Any]]] = {
    "svident-detection": (DETECTION_GOLD, DETECTION_RUN),
    "svident-disambiguation": (RANKING_GOLD, RANKING_RUN),
}


def _score(name: str, data: bytes) -> None:
    gold, _ = CASES[name]
    try:
        report = get_scorer(name).score(gold, data)
    except ValidationError as exc:
        assert exc.problems
    else:
        assert all(0.0 <= value <= 1.0 for value in report.metrics.values())


@FUZZ
@given(st.sampled_from(sorted(CASES)), st.binary(max_size=200))
def test_arbitrary_bytes_as_a_submission_are_scored_or_refused(name: str, data: bytes) -> None:
    _score(name, data)


@FUZZ
@given(
    st.sampled_from(sorted(CASES)),
    st.dictionaries(st.sampled_from(["u1", "u5", "q1", "q3", "n1", "zz"]), json_value, max_size=4),
    st.lists(st.sampled_from(["u2", "u6", "q2", "q4", "n2"]), max_size=3),
)
def test_mutated_submissions_are_scored_or_refused(name: str, changes: dict[str, Any], dropped: list[str]) -> None:
    _, run = CASES[name]
    mutated = {k: v for k, v in (run | changes).items() if k not in dropped}
    _score(name, json.dumps(mutated).encode())


candidate = st.dictionaries(
    st.text(max_size=3),
    st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(10**400), 10**400), st.booleans()),
    max_size=6,
)


@FUZZ
@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4", "n1", "n2", "n3"]), candidate))
def test_arbitrary_candidate_lists_are_scored_or_refused(run: dict[str, dict[str, Any]]) -> None:
    _score("svident-disambiguation", json.dumps(run).encode())


# -- Task 2: lists checked as they are read and cut a few at a time -------------------------------------------------


def _queries_and_run(count: int) -> tuple[bytes, dict[str, dict[str, Any]]]:
    """A gold of ``count`` queries and a run of 60 candidates each (more than the 50 kept), two lists in three written
    best first, many scores tied."""
    gold = make_gold([(f"s{i}", "en", f"d{i % 7}", "1", f"v{i % 60}") for i in range(count)])
    rng = random.Random(count)
    run = {}
    for i in range(count):
        scores = [round(rng.random(), 2) for _ in range(60)]
        run[f"s{i}"] = {f"v{j}": s for j, s in enumerate(sorted(scores, reverse=True) if i % 3 else scores)}
    return gold, run


def _parse(gold: bytes, run: dict[str, Any], pruned: int) -> dict[str, dict[str, float]]:
    scorer = get_scorer("svident-disambiguation")
    public = scorer.public_view(scorer.parse_gold(gold))
    saved = ranking._pruned
    try:
        ranking._pruned = pruned  # from PLAIN_PRUNES on, lists are cut with numpy
        parsed: dict[str, dict[str, float]] = scorer.parse_submission(json.dumps(run).encode(), public)
        return parsed
    finally:
        ranking._pruned = saved


@pytest.mark.parametrize("pruned", [0, ranking.PLAIN_PRUNES])
def test_lists_cut_together_come_out_as_each_list_cut_alone(pruned: int) -> None:
    gold, run = _queries_and_run(50)
    run["s7"] = {f"v{j}": j for j in range(60)}  # integer scores: taken alone, as lists that the common check fails
    keep = ranking.depth([1, 5, 10, 20], 50)
    expected = {key: ranking.prune(candidates, keep) for key, candidates in run.items()}
    assert repr(_parse(gold, run, pruned)) == repr(expected)


def test_problems_among_lists_cut_together_are_all_reported_in_the_files_order() -> None:
    gold, run = _queries_and_run(40)
    run["s3"]["v5"] = True
    run["s11"] = {"x" * 1001: 0.5}
    run["s30"]["v1"] = "0.5"
    run["zz"] = {}
    with pytest.raises(InvalidSubmission) as caught:
        _parse(gold, run, ranking.PLAIN_PRUNES)
    message = str(caught.value)
    places = ['key "s3", variable "v5": score true', 'key "s11", variable "xxx', 'key "s30", variable "v1"', 'key "zz"']
    assert [message.find(place) for place in places] == sorted(message.find(place) for place in places)
    assert -1 not in [message.find(place) for place in places]


def _outcome(data: bytes) -> Any:
    """The parsed run, or the problems it is refused with."""
    scorer = get_scorer("svident-disambiguation")
    try:
        return scorer.parse_submission(data, scorer.public_view(scorer.parse_gold(RANKING_GOLD)))
    except InvalidSubmission as refused:
        return [str(problem) for problem in refused.problems]


def test_ids_at_the_edge_of_the_windows_pass_up_to_the_limit_and_are_refused_past_it_as_the_slow_path_does() -> None:
    """Wherever an id lies against the windows ``KeyBound`` reads (its run without a colon starting at every place
    of their period): of the limit it is vouched for somewhere, one past it never; in a run, one of the limit is
    accepted and one past it refused as the slow path does it (the same run with an id written in UTF-8 elsewhere,
    which sends the whole file to the strict decoder, whose lists are never vouched for)."""
    limit = RunLimits().variable_chars
    keys = KeyBound(limit)
    vouched = {limit: False, limit + 1: False}
    for length, before in itertools.product(vouched, range(limit)):  # the windows are about limit / 2 wide
        members = {"a": 0, "b" * before: 0, "k" * length: 0}  # the shortest values JSON has
        text = json.dumps({"q": members}, separators=(",", ":")).encode()
        assert dict(iter_json_object(text, lambda value: InvalidSubmission([]), keys=keys)) == {"q": members}
        vouched[length] |= keys.short
        scores = dict.fromkeys(members, 0.5)  # a Task 2 list: every score a float, read on the fast path
        run = RANKING_RUN | {"q2": scores, "q3": {"\u00e9": 1.0}}
        fast = _outcome(json.dumps(run, separators=(",", ":")).encode())
        assert fast == _outcome(json.dumps(run, separators=(",", ":"), ensure_ascii=False).encode())
        if length == limit:
            assert set(fast["q2"]) == set(scores)
        else:
            assert len(fast) == 1 and fast[0].startswith('key "q2", variable "kkk')
    assert vouched == {limit: True, limit + 1: False}
