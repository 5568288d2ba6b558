"""The columnar reading of TREC files (a piece of lines that all have their format's fields, split in one pass) gives
what reading line by line gives: the same judgements and rankings, and the same refusals word for word, for files
mixing well-formed lines with blank lines, comments, lines of other widths, signs, repeats, CRLF and bad numbers,
read in pieces of any size."""

from __future__ import annotations

import math
from array import array
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers.errors import ValidationError
from scorers.generic import trec_columns, trec_format

SPACE = st.sampled_from([" ", "\t", "  ", " \t"])
QUERY = st.sampled_from(["q1", "q2", "q3", "#q"])
DOCNO = st.sampled_from(["d1", "d2", "d3", "d#4", "é"])
GRADE = st.sampled_from(["0", "1", "2", "-1", "+3", "1001", "x", "12345678901", "007"])
SCORE = st.sampled_from(["1", "0.5", "-2.25", "1e3", ".5", "+1.", "0x1p3", "nan", "1e999", "abc", "3.4028236e38"])
END = st.sampled_from(["\n", "\r\n"])


def _line(fields: list[str], space: str, end: str) -> str:
    return space.join(fields) + end


QRELS_LINE = st.one_of(
    st.builds(lambda q, d, g, s, e: _line([q, "0", d, g], s, e), QUERY, DOCNO, GRADE, SPACE, END),
    st.sampled_from(["\n", "   \n", "# comment\n", "q1 0 d1\n", "q1 0 d1 1 extra\n"]),
)
RUN_LINE = st.one_of(
    st.builds(lambda q, d, v, s, e: _line([q, "Q0", d, "1", v, "tag"], s, e), QUERY, DOCNO, SCORE, SPACE, END),
    st.sampled_from(["\n", " \n", "# comment\n", "q1 Q0 d1 1 0.5\n", "q1 Q0 d1 1 0.5 tag more\n"]),
)


def _outcome(read: Any) -> Any:
    try:
        return ("value", read())
    except ValidationError as exc:
        return ("refused", str(exc))


def _both(monkeypatch: pytest.MonkeyPatch, chunk: int, read: Any) -> tuple[Any, Any]:
    monkeypatch.setattr(trec_format, "CHUNK", chunk)
    columnar = _outcome(read)
    with monkeypatch.context() as patched:
        patched.setattr(trec_columns, "columns", lambda piece, fields, wanted: None)
        by_lines = _outcome(read)
    return columnar, by_lines


@settings(max_examples=300, deadline=None)
@given(st.lists(QRELS_LINE, min_size=1, max_size=30), st.sampled_from([1, 16, 64, 1 << 16]), st.booleans())
def test_qrels_read_in_columns_are_the_qrels_read_line_by_line(lines: list[str], chunk: int, cut: bool) -> None:
    text = "".join(lines)
    data = (text.rstrip("\n") if cut else text).encode("utf-8")
    with pytest.MonkeyPatch.context() as monkeypatch:
        columnar, by_lines = _both(monkeypatch, chunk, lambda: trec_format.parse_qrels(data))
    assert columnar == by_lines


@settings(max_examples=300, deadline=None)
@given(st.lists(RUN_LINE, min_size=1, max_size=30), st.sampled_from([1, 16, 64, 1 << 16]), st.booleans())
def test_runs_read_in_columns_are_the_runs_read_line_by_line(lines: list[str], chunk: int, cut: bool) -> None:
    text = "".join(lines)
    data = (text.rstrip("\n") if cut else text).encode("utf-8")
    read = lambda: trec_format.parse_run(data, ["q1", "q2", "q3"])  # noqa: E731
    with pytest.MonkeyPatch.context() as monkeypatch:
        columnar, by_lines = _both(monkeypatch, chunk, read)
    assert columnar == by_lines


def test_a_clean_piece_is_read_in_columns() -> None:
    data = b"q1 Q0 d1 1 0.5 t\nq1\tQ0\td2\t2\t0.25\tt\r\nq2 Q0 d1 1 1e3 t"
    assert trec_columns.columns(data, 6, (0, 1, 2, 3, 4, 5)) == [
        [b"q1", b"q1", b"q2"],
        [b"Q0", b"Q0", b"Q0"],
        [b"d1", b"d2", b"d1"],
        [b"1", b"2", b"1"],
        [b"0.5", b"0.25", b"1e3"],
        [b"t", b"t", b"t"],
    ]
    assert trec_columns.columns(data, 6, (4, 0)) == [[b"0.5", b"0.25", b"1e3"], [b"q1", b"q1", b"q2"]]
    assert trec_columns.columns(b"q1 Q0 d1 1 0.5 t\n\nq2 Q0 d1 1 1 t\n", 6, (0,)) is None  # a blank line
    assert trec_columns.columns(b"q1 Q0 d1 1 0.5\nq2 Q0 d1 1 1 t t\n", 6, (0,)) is None  # 5 and 7 fields
    run = trec_format.parse_run(data, ["q1", "q2"])
    assert run.rankings["q1"].documents() == ["d1", "d2"]
    assert run.rankings["q1"].scores.tolist() == [0.5, 0.25]


@pytest.mark.parametrize("chunk", [1, 16, 40, 1 << 16])
def test_a_docno_ranked_twice_is_found_within_a_piece_across_pieces_and_after_another_query(chunk: int) -> None:
    # Docnos are checked as they are read while a query's lines follow each other, in one piece or across pieces;
    # a query that comes back after another is checked again from all its lines.
    lines = ["q1 Q0 a 1 3 t", "q1 Q0 b 2 2 t", "q1 Q0 a 3 1 t", "q2 Q0 a 1 3 t", "q2 Q0 c 2 3 t", "q3 Q0 a 1 1 t"]
    lines += ["q2 Q0 c 3 1 t", "q3 Q0 d 2 1 t", "q4 Q0 e 1 1 t", "q4 Q0 e 2 1 t"]
    data = "\n".join(lines).encode()
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(trec_format, "CHUNK", chunk)
        with pytest.raises(ValidationError) as refused:
            trec_format.parse_run(data, ["q1", "q2", "q3", "q4"])
    assert [f"{p.where}: {p.message}" for p in refused.value.problems] == [
        "line 3: docno 'a' is ranked again for query 'q1' (first at line 1)",
        "line 7: docno 'c' is ranked again for query 'q2' (first at line 5)",
        "line 10: docno 'e' is ranked again for query 'q4' (first at line 9)",
    ]
    clean = "\n".join(lines[:2] + lines[3:5] + lines[5:6] + lines[7:9]).encode()
    assert list(trec_format.parse_run(clean, ["q1", "q2", "q3", "q4"]).rankings) == ["q1", "q2", "q3", "q4"]


def _runs_one_by_one(queries: list[bytes]) -> list[int]:
    return [0, *(i for i in range(1, len(queries)) if queries[i] != queries[i - 1]), len(queries)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([b"q1", b"q2", b"q3", b"q10"]), st.integers(1, 40)), min_size=1, max_size=25))
def test_the_runs_of_a_query_are_found_as_comparing_each_line_with_the_next(lengths: list[tuple[bytes, int]]) -> None:
    # Long runs, short ones, a query coming back, more runs than the search handles: the same bounds.
    queries = [bytes(query) for query, length in lengths for _ in range(length)]  # distinct objects, as split makes
    assert trec_columns.runs(queries) == _runs_one_by_one(queries)


def test_scores_in_one_call_are_the_c_floats_of_each_score() -> None:
    fields = [b"1", b"0.5", b"-2.25", b"1e3", b".5", b"+1.", b"-0", b"3.4028236e38", b"1e-50", b"16.71"]
    read = trec_columns.scores(fields)
    assert read is not None
    assert read.tobytes() == array("f", [float(f) for f in fields]).tobytes()
    # Whatever is not plainly a finite decimal is left to the careful reading, which words the refusal or reads it.
    for odd in ([b"0x1p3"], [b"nan"], [b"1e999"], [b"1_0"], [b"1.5x"], [b"1e308", b"1e308"]):
        assert trec_columns.scores(odd) is None
    run = trec_format.parse_run(b"q1 Q0 a 1 1e308 t\nq1 Q0 b 2 1e308 t\n", ["q1"])  # finite, though their sum is not
    assert run.rankings["q1"].scores.tolist() == [math.inf, math.inf]  # each is past a C float's range, as in trec_eval
