"""Pairs for the generic scorers: the same query ids or item ids, other judgements, labels, numbers and groups.

The public view of ``trec`` is the qrels' query ids; that of ``classification`` and ``regression`` the gold's ids
only, so the two golds here also differ in their group columns, which validation must not read either.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from tests.scorers.secrecy import GARBAGE, IDS, Pair, dumps, pairs_for

DOCNOS = st.sampled_from(["d1", "d2", "d3", "D4", "d#5"])
GRADES = st.sampled_from([-1, 0, 0, 1, 2])
TREC_OPTIONS = st.fixed_dictionaries(
    {
        "measures": st.sampled_from([["map"], ["P_2", "num_rel", "gm_map"], ["ndcg_cut_3", "recall_2"]]),
        "complete_queries": st.booleans(),
        "reject_unknown_queries": st.booleans(),
        "require_all_queries": st.booleans(),
        "max_docs_per_query": st.sampled_from([None, 1, 2]),
    }
)


def _run(rows: list[tuple[str, str, str]]) -> bytes:
    return "".join(f"{q} Q0 {d} {rank} {score} tag\n" for rank, (q, d, score) in enumerate(rows, start=1)).encode()


@pairs_for("trec")
@st.composite
def trec(draw: st.DrawFn) -> Pair:
    queries = draw(st.lists(IDS, min_size=1, max_size=4, unique=True))
    golds = []
    for _ in range(2):
        judged = {q: draw(st.dictionaries(DOCNOS, GRADES, min_size=1, max_size=4)) for q in queries}
        golds.append("".join(f"{q} 0 {d} {g}\n" for q, docs in judged.items() for d, g in docs.items()).encode())
    score = st.sampled_from(["1", "2.5", "-1", "3.0E+00", "0x1p1", ".5"])
    complete = [(q, d, draw(score)) for q in queries for d in draw(st.lists(DOCNOS, min_size=1, unique=True))]
    some = draw(st.lists(st.sampled_from(queries), unique=True))
    partial = [row for row in complete if row[0] in some]
    submissions = [
        _run(complete),
        _run(partial),
        _run([*complete, ("zz-unknown", "d1", "1")]),
        _run([("zz-unknown", "d1", "1")]),
        _run([*complete, complete[0]]),  # a docno ranked twice
        _run([(complete[0][0], complete[0][1], draw(st.sampled_from(["abc", "NaN", "inf", "1e999", "1_0"])))]),
        _run(complete).replace(b" tag\n", b"\n", 1),  # a line of five fields
        b"# only a comment\n\n",
        *GARBAGE,
    ]
    return Pair(golds[0], golds[1], tuple(submissions), draw(TREC_OPTIONS))


def _table(rows: list[tuple[Any, ...]], header: tuple[str, ...], fmt: str) -> bytes:
    if fmt == "jsonl":
        return "\n".join(json.dumps(dict(zip(header, row, strict=True))) for row in rows).encode()
    sep = "\t" if fmt == "tsv" else ","
    return "".join(sep.join(map(str, row)) + "\n" for row in [header, *rows]).encode()


def _keyed(draw: st.DrawFn, value: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], column: str) -> Pair:
    fmt = draw(st.sampled_from(["tsv", "csv", "jsonl"]))
    ids = draw(st.lists(IDS, min_size=1, max_size=6, unique=True))
    group = st.sampled_from(["g1", "g2", "g3"])
    header = ("id", column, "lang", "doc")
    golds = [_table([(i, draw(value), draw(group), draw(group)) for i in ids], header, fmt) for _ in range(2)]
    complete = {i: draw(value) for i in ids}
    partial = {i: complete[i] for i in draw(st.lists(st.sampled_from(ids), unique=True))}
    submissions = [
        dumps(complete),
        dumps(partial),
        dumps({**complete, "zz-unknown": draw(value)}),
        dumps({**complete, ids[0]: draw(bad)}),
        _table([(i, v) for i, v in complete.items()], ("id", column), fmt),
        _table([(i, v) for i, v in [*complete.items(), (ids[0], complete[ids[0]])]], ("id", column), fmt),
        _table([(i, v) for i, v in partial.items()], ("id", column), fmt),
        dumps({}),
        *GARBAGE,
    ]
    options = {
        "format": fmt,
        ("label_column" if column == "label" else "value_column"): column,
        "group_by": draw(st.sampled_from([[], ["lang"], ["lang", "doc"]])),
    }
    return Pair(golds[0], golds[1], tuple(submissions), options)


@pairs_for("classification")
@st.composite
def classification(draw: st.DrawFn) -> Pair:
    pair = _keyed(draw, st.sampled_from(["x", "y", "z"]), st.sampled_from(["w", True, None, 1.5, [], ""]), "label")
    options = {**pair.options, "labels": draw(st.sampled_from([None, ["x", "y", "z"]]))}
    return Pair(pair.gold_a, pair.gold_b, pair.submissions, options)


@pairs_for("regression")
@st.composite
def regression(draw: st.DrawFn) -> Pair:
    number = st.integers(-5, 5) | st.floats(-10, 10, allow_nan=False).map(lambda v: round(v, 3))
    return _keyed(draw, number, st.sampled_from(["1.5", True, None, [], 10**400]), "value")
