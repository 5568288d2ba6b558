"""FAMuS pairs: the same docids and the same largest gold role with other templates, roles and fillers
(``famus-cdae``); the same instances and frames with other source labels (``famus-sv``)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.scorers.secrecy import GARBAGE, IDS, Pair, dumps, jsonl, pairs_for

WORDS = st.lists(st.sampled_from(["the", "man", "Paris", "a", "b"]), min_size=1, max_size=3).map(" ".join)
FRAMES = st.sampled_from(["F", "G"])
#: Small limits, so that small files reach each of them; every gold drawn below is within them.
CDAE_OPTIONS = {
    "max_templates_per_document": 2,
    "max_fillers_per_role": 3,
    "max_filler_chars": 20,
    "max_gold_mentions_per_role": 3,
    "max_gold_tokens_per_role": 6,
    "max_comparisons": 15,
    "max_token_pairs": 40,
}


@st.composite
def _gold_template(draw: st.DrawFn) -> dict[str, Any]:
    roles = draw(st.dictionaries(st.sampled_from(["A", "B"]), WORDS.map(lambda text: [[[text]]]) | st.just([])))
    return {"incident_type": draw(FRAMES), **roles}


#: A document both golds hold, whose role is the largest of any gold drawn here (3 mentions of 6 tokens; a drawn
#: role holds at most 2 mentions of 3 words): the largest role, which the public view publishes, is the same.
LARGEST = {"docid": "zz-largest", "templates": [{"incident_type": "F", "Z": [[["a b c d"]], [["e"]], [["f"]]]}]}


def _cdae_gold(draw: st.DrawFn, docids: list[str]) -> bytes:
    drawn = [{"docid": d, "templates": draw(st.lists(_gold_template(), max_size=2))} for d in docids]
    return jsonl([*drawn, LARGEST])


@st.composite
def _template(draw: st.DrawFn) -> dict[str, Any]:
    fillers = st.lists(WORDS.map(lambda text: [text]) | WORDS, max_size=2)
    return {"incident_type": draw(FRAMES), **draw(st.dictionaries(st.sampled_from(["A", "B", "C"]), fillers))}


@pairs_for("famus-cdae")
@st.composite
def cdae(draw: st.DrawFn) -> Pair:
    docids = draw(st.lists(IDS, min_size=1, max_size=4, unique=True))
    gold_a, gold_b = _cdae_gold(draw, docids), _cdae_gold(draw, docids)
    complete = {d: draw(st.lists(_template(), max_size=2)) for d in docids}
    some = draw(st.sampled_from(docids))
    partial = {d: complete[d] for d in draw(st.lists(st.sampled_from(docids), unique=True))}
    broken: list[Any] = [
        "none",
        ["a template"],
        [{"A": [["x"]]}],
        [{"incident_type": "F", "A": "a string"}],
        [{"incident_type": "F", "A": [[]]}],
        [{"incident_type": "F", "A": [[3]]}],
        [{"incident_type": "F"}] * 3,  # templates_per_document
        [{"incident_type": "F", "A": [["a"], ["b"], ["c"], ["d"]]}],  # fillers_per_role
        [{"incident_type": "F", "A": [["a" * 21]]}],  # filler_chars
        [{"incident_type": "F", "A": [["a"], ["b"], ["c"]], "B": [["d"], ["e"], ["f"]]}],  # comparisons: 2 * 12
        [{"incident_type": "F", "A": [["a b c d e f"]], "B": [["a b c d e f"]]}],  # token pairs: 2 * 36
    ]
    submissions = [{}, partial, complete, {**complete, "zz-unknown": []}, *({**partial, some: b} for b in broken)]
    return Pair(gold_a, gold_b, (*map(dumps, submissions), *GARBAGE), CDAE_OPTIONS)


LABEL = st.sampled_from([0, 1, True, False])
BAD_LABEL = st.sampled_from(["1", 1.0, 2, "yes", None])


def _sv_gold(draw: st.DrawFn, instances: list[tuple[str, str | None]]) -> bytes:
    lines = [{"instance_id": i, "valid_source": draw(st.booleans())} for i, _ in instances]
    return jsonl(
        [line | ({"frame": frame} if frame else {}) for line, (_, frame) in zip(lines, instances, strict=True)]
    )


@pairs_for("famus-sv")
@st.composite
def source_validation(draw: st.DrawFn) -> Pair:
    ids = draw(st.lists(IDS, min_size=1, max_size=6, unique=True))
    instances = [(i, draw(st.sampled_from(["Cure", "Kidnapping", None]))) for i in ids]
    gold_a, gold_b = _sv_gold(draw, instances), _sv_gold(draw, instances)
    complete = {i: draw(LABEL) for i in ids}
    partial = {i: complete[i] for i in draw(st.lists(st.sampled_from(ids), unique=True))}
    submissions: list[Any] = [
        {},
        partial,
        complete,
        {**complete, "zz-unknown": 1},
        {**partial, draw(st.sampled_from(ids)): draw(BAD_LABEL)},
        list(complete.values()),
    ]
    return Pair(gold_a, gold_b, (*map(dumps, submissions), *GARBAGE))
