"""SV-Ident pairs: the same sentences (uuid, language, document, text), other labels and variables."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.scorers.secrecy import GARBAGE, IDS, Pair, dumps, pairs_for
from tests.scorers.tasks.svident_data import make_gold

VARIABLES = ("v1", "v2", "v3", "v4", "v5")
LABEL = st.sampled_from(["0", "1", 0, 1])
BAD_LABEL = st.sampled_from(["2", "yes", True, 0.5, None, [1], {}])
SCORE = st.floats(-10, 10, allow_nan=False) | st.integers(-5, 5)
BAD_SCORE = st.sampled_from(["0.5", True, None, [1], {"x": 1}, 10**400])
DISAMBIGUATION_OPTIONS = {
    "max_candidates_per_query": 3,
    "max_candidates": 8,
    "max_variable_chars": 4,
    "max_relevant_per_query": 5,
}


def _answers(draw: st.DrawFn, n: int, *, with_query: bool) -> list[tuple[str, str]]:
    """``(is_variable, variable)`` per sentence; with ``with_query``, at least one Task 2 query."""
    out = []
    for _ in range(n):
        is_variable = draw(st.sampled_from(["0", "1"]))
        chosen = draw(st.lists(st.sampled_from([*VARIABLES, "unk"]), unique=True, max_size=4))
        out.append((is_variable, ";".join(chosen) if is_variable == "1" else ""))
    if with_query and not any(flag == "1" and set(v.split(";")) - {"", "unk"} for flag, v in out):
        k = draw(st.integers(0, n - 1))
        out[k] = ("1", draw(st.sampled_from(VARIABLES)))
    return out


@st.composite
def _sentences(draw: st.DrawFn) -> list[tuple[str, str, str]]:
    uuids = draw(st.lists(IDS, min_size=1, max_size=6, unique=True))
    return [(uuid, draw(st.sampled_from(["en", "de"])), draw(st.sampled_from(["d1", "d2"]))) for uuid in uuids]


def _golds(draw: st.DrawFn, *, with_query: bool) -> tuple[list[str], bytes, bytes]:
    sentences = draw(_sentences())
    a = _answers(draw, len(sentences), with_query=with_query)
    b = _answers(draw, len(sentences), with_query=with_query)
    rows = [[(u, lang, doc, *answer) for (u, lang, doc), answer in zip(sentences, ans, strict=True)] for ans in (a, b)]
    return [u for u, _, _ in sentences], make_gold(rows[0]), make_gold(rows[1])


def _subset(draw: st.DrawFn, uuids: list[str]) -> list[str]:
    return draw(st.lists(st.sampled_from(uuids), unique=True, max_size=len(uuids)))


@pairs_for("svident-detection")
@st.composite
def detection(draw: st.DrawFn) -> Pair:
    uuids, gold_a, gold_b = _golds(draw, with_query=False)
    complete = {u: draw(LABEL) for u in uuids}
    partial = {u: complete[u] for u in _subset(draw, uuids)}
    submissions: list[Any] = [
        {},
        partial,
        complete,
        {**complete, "zz-unknown": "1"},
        {**partial, "zz-unknown": draw(BAD_LABEL)},
        {**complete, draw(st.sampled_from(uuids)): draw(BAD_LABEL)},
        list(complete.items()),
    ]
    repeated = dumps(complete)[:-1] + b', "' + uuids[0].encode() + b'": "1"}'
    return Pair(gold_a, gold_b, (*map(dumps, submissions), repeated, *GARBAGE))


def _candidates(draw: st.DrawFn, max_size: int = 3) -> dict[str, Any]:
    return draw(st.dictionaries(st.sampled_from([*VARIABLES, "x"]), SCORE, max_size=max_size))


@pairs_for("svident-disambiguation")
@st.composite
def disambiguation(draw: st.DrawFn) -> Pair:
    uuids, gold_a, gold_b = _golds(draw, with_query=True)
    lists = {u: _candidates(draw, 2) for u in uuids}
    partial = {u: lists[u] for u in _subset(draw, uuids)}
    some = draw(st.sampled_from(uuids))
    submissions: list[Any] = [
        {},
        partial,
        lists,
        {**partial, "zz-unknown": {}},
        {**partial, some: [["v1", 1.0]]},
        {**partial, some: {"v1": draw(BAD_SCORE)}},
        {**partial, some: {"v1": 1, "v2": 2, "v3": 3, "v4": 4}},  # beyond max_candidates_per_query
        {**{u: {"v1": 1, "v2": 2, "v3": 3} for u in uuids}, "z1": {}, "z2": {"a": 1, "b": 2, "c": 3}},  # in all
        {**partial, some: {"vvvvv": 1.0}},  # beyond max_variable_chars
    ]
    nan = b'{"' + some.encode() + b'": {"v1": NaN}}'
    return Pair(gold_a, gold_b, (*map(dumps, submissions), nan, *GARBAGE), DISAMBIGUATION_OPTIONS)
