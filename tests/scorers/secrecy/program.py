"""Pairs for the ``program`` scorer: one scoring program, other reference data.

What a submission is checked against at upload is its archive alone (names, links, size), never the
reference data, which only the sandboxed program reads when scoring.
"""

from __future__ import annotations

from hypothesis import strategies as st

from tests.codalab import tiny
from tests.scorers.secrecy import GARBAGE, Pair, pairs_for

LABELS = st.sampled_from(["a", "b", "c"])


@pairs_for("program")
@st.composite
def program(draw: st.DrawFn) -> Pair:
    size = draw(st.integers(min_value=1, max_value=4))
    truths = [draw(st.lists(LABELS, min_size=size, max_size=size)) for _ in range(2)]
    prediction = draw(st.lists(LABELS, min_size=size, max_size=size))
    # The names a result must hold are public (an option), so their refusals are alike whatever the gold; where
    # the phase names none, a file of another name goes to the program (which fails on it).
    named = draw(st.sampled_from([{}, {"result_files": ["prediction.txt"]}]))
    other_name = (tiny.zip_of({"answers.txt": "\n".join(prediction).encode()}),) if named else ()
    submissions = (
        tiny.result(prediction),
        tiny.zip_of({"../prediction.txt": b"a"}),
        tiny.zip_of({}),
        *other_name,
        draw(st.sampled_from(GARBAGE)),
    )
    return Pair(tiny.gold(truths[0]), tiny.gold(truths[1]), submissions, {**tiny.OPTIONS, **named})
