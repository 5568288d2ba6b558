"""The application tests' scorers (``tests/app/labels_scorer.py``): the same ids, other labels."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.scorers.secrecy import GARBAGE, IDS, Pair, dumps, pairs_for

LABELS = st.sampled_from(["x", "y", "z"])


@pairs_for("test-labels", "test-slow")
@st.composite
def labels(draw: st.DrawFn) -> Pair:
    ids = draw(st.lists(IDS, min_size=1, max_size=6, unique=True))
    gold_a, gold_b = ({i: draw(LABELS) for i in ids} for _ in range(2))
    complete = {i: draw(LABELS) for i in ids}
    partial = {i: complete[i] for i in draw(st.lists(st.sampled_from(ids), unique=True))}
    submissions: list[Any] = [{}, partial, complete, {**complete, "zz-unknown": "x"}, {**partial, ids[0]: 3}]
    return Pair(dumps(gold_a), dumps(gold_b), (*map(dumps, submissions), *GARBAGE))
