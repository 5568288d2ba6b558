"""Reading SciER files: every refusal of SCORING.md with its message, what is accepted, and fuzzing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorers import InvalidGold, InvalidSubmission, ValidationError, get_scorer
from tests.scorers.tasks.scier_data import GOLD_DOCS, gold_bytes, jsonl, perfect_lines, predicted_lines

Lines = list[Any]


def refusal(name: str, data: bytes, options: dict[str, Any] | None = None) -> str:
    """The message a submission is refused with (the test fails if it is accepted)."""
    scorer = get_scorer(name, options)
    with pytest.raises(InvalidSubmission) as caught:
        scorer.parse_submission(data, scorer.public_view(scorer.parse_gold(gold_bytes())))
    return str(caught.value)


def mutated(change: Callable[[Lines], object], *, entities: bool = True) -> bytes:
    lines: Lines = perfect_lines(entities=entities)
    change(lines)
    return jsonl(lines)


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Lines], None]:
    def change(lines: Lines) -> None:
        target: Any = lines
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return change


A_NER = (0, "predicted_ner")
A_REL = (0, "predicted_relations")

# (case id, change to a perfect scier-ere submission, expected text of the message)
SUBMISSION_REFUSALS: list[tuple[str, Callable[[Lines], object], str]] = [
    ("missing-doc", lambda ls: ls.pop(), 'doc_id "B": has no line; every gold document needs one'),
    (
        "unknown-doc",
        lambda ls: ls.append({**ls[1], "doc_id": "C"}),
        'line 3: unknown doc_id "C" (not a document of the gold)',
    ),
    ("repeated-doc", lambda ls: ls.append(ls[0]), 'line 3: doc_id "A" repeated (first on line 1)'),
    (
        "not-an-object",
        lambda ls: ls.append([1, 2]),
        "line 3: expected a JSON object with doc_id, predicted_ner, predicted_relations, found a list",
    ),
    ("missing-doc-id", lambda ls: ls[0].pop("doc_id"), 'line 1: missing key "doc_id"'),
    ("doc-id-number", _set((0, "doc_id"), 5), "line 1: doc_id must be a string, found the integer 5"),
    ("missing-ner", lambda ls: ls[0].pop("predicted_ner"), 'line 1, document "A": missing key(s) "predicted_ner"'),
    (
        "missing-both",
        lambda ls: [ls[1].pop("predicted_ner"), ls[1].pop("predicted_relations")],
        'line 2, document "B": missing key(s) "predicted_ner", "predicted_relations"',
    ),
    (
        "sentence-count",
        _set(A_NER, [[]]),
        'line 1, document "A": predicted_ner has 1 sentence lists; the gold document has 2 sentences',
    ),
    (
        "sentence-count-relations",
        _set(A_REL, [[], [], []]),
        "predicted_relations has 3 sentence lists; the gold document has 2 sentences",
    ),
    (
        "not-a-list",
        _set(A_NER, "x"),
        'predicted_ner must be a list with one list of rows per sentence, found the string "x"',
    ),
    (
        "sentence-not-a-list",
        _set((*A_NER, 1), None),
        'document "A", predicted_ner[1]: expected a list of rows, found null',
    ),
    (
        "short-row",
        _set((*A_NER, 0, 0), [2, 2]),
        "predicted_ner[0][0]: expected a row [start, end, type] of 3 items, found 2 items: [2, 2]",
    ),
    (
        "long-relation-row",
        _set((*A_REL, 0, 0), [2, 2, 4, 4, "Used-For", 0.9]),
        "predicted_relations[0][0]: expected a row [start1, end1, start2, end2, label] of 5 items, found 6 items",
    ),
    ("row-not-a-list", _set((*A_NER, 0, 0), {"start": 2}), "expected a row [start, end, type], found an object"),
    ("boolean-offset", _set((*A_NER, 0, 0, 0), True), "predicted_ner[0][0]: start must be an integer, found true"),
    ("string-offset", _set((*A_NER, 0, 0, 1), "2"), 'end must be an integer, found the string "2"'),
    ("float-offset", _set((*A_NER, 0, 0, 0), 2.0), "start must be an integer, found the number 2.0"),
    ("boolean-relation-offset", _set((*A_REL, 0, 0, 2), False), "start2 must be an integer, found false"),
    ("type-not-a-string", _set((*A_NER, 0, 0, 2), 1), "type must be a string, found the integer 1"),
    ("label-null", _set((*A_REL, 0, 0, 4), None), "predicted_relations[0][0]: label must be a string, found null"),
    (
        "span-outside",
        _set((*A_NER, 0, 0), [6, 6, "Method"]),
        'line 1, document "A", predicted_ner[0][0]: span 6-6 is outside sentence 0 (tokens 0-5)',
    ),
    ("negative-offset", _set((*A_NER, 1, 0), [-1, 6, "Method"]), "span -1-6 is outside sentence 1 (tokens 6-9)"),
    ("start-after-end", _set((*A_NER, 0, 0), [3, 2, "Method"]), "predicted_ner[0][0]: start 3 > end 2"),
    (
        "relation-object-outside",
        _set((*A_REL, 0, 0), [2, 2, 6, 6, "Used-For"]),
        "predicted_relations[0][0]: object span 6-6 is outside sentence 0 (tokens 0-5)",
    ),
    (
        "relation-subject-reversed",
        _set((*A_REL, 0, 0), [4, 2, 4, 4, "Used-For"]),
        "predicted_relations[0][0]: subject start 4 > end 2",
    ),
    (
        "repeated-entity",
        lambda ls: ls[0]["predicted_ner"][0].append([2, 2, "Method"]),
        'document "A", predicted_ner[0][2]: repeated row [2, 2, "Method"] (the same as predicted_ner[0][0])',
    ),
    (
        "repeated-relation",
        lambda ls: ls[1]["predicted_relations"][0].append([0, 0, 2, 2, "Synonym-Of"]),
        'predicted_relations[0][1]: repeated row [0, 0, 2, 2, "Synonym-Of"] (the same as predicted_relations[0][0])',
    ),
    (
        "sentences-differ",
        lambda ls: ls[0].update(sentences=[GOLD_DOCS[0]["sentences"][0], ["BERT", "is", "a", "Model"]]),
        'line 1, document "A": sentences[1] differs from the gold\'s sentence 1',
    ),
    (
        # The gold keeps a digest of each sentence: a token that is not a string, or a sentence that is not a
        # list, differs as a changed token does.
        "sentences-token-not-a-string",
        lambda ls: ls[0].update(sentences=[[*GOLD_DOCS[0]["sentences"][0][:-1], 1], GOLD_DOCS[0]["sentences"][1]]),
        'line 1, document "A": sentences[0] differs from the gold\'s sentence 0',
    ),
    (
        "sentences-sentence-not-a-list",
        lambda ls: ls[0].update(sentences=[GOLD_DOCS[0]["sentences"][0], " ".join(GOLD_DOCS[0]["sentences"][1])]),
        'line 1, document "A": sentences[1] differs from the gold\'s sentence 1',
    ),
    (
        "sentences-count-differs",
        lambda ls: ls[0].update(sentences=GOLD_DOCS[0]["sentences"][:1]),
        "sentences differs from the gold (1 sentences, gold has 2)",
    ),
]


@pytest.mark.parametrize(
    ("change", "message"), [c[1:] for c in SUBMISSION_REFUSALS], ids=[c[0] for c in SUBMISSION_REFUSALS]
)
def test_submission_refusals(change: Callable[[Lines], object], message: str) -> None:
    data = mutated(change)
    found = refusal("scier-ere", data)
    assert message in found
    assert "1 problem." in found


def test_scier_re_refusals() -> None:
    missing = mutated(lambda ls: ls[0].pop("predicted_relations"), entities=False)
    assert 'line 1, document "A": missing key(s) "predicted_relations"' in refusal("scier-re", missing)
    # predicted_ner is not needed, but when present it is checked: a malformed one is a mistake.
    bad_ner = mutated(_set(A_NER, [[[3, 2, "Method"]], []]), entities=True)
    assert "predicted_ner[0][0]: start 3 > end 2" in refusal("scier-re", bad_ner)
    repeated = mutated(lambda ls: ls[0]["predicted_relations"][0].append([2, 2, 4, 4, "Used-For"]), entities=False)
    assert "repeated row [2, 2, 4, 4, " in refusal("scier-re", repeated)


def test_both_directions_of_a_symmetric_relation_are_a_repeat_only_with_the_option() -> None:
    data = mutated(lambda ls: ls[1]["predicted_relations"][0].append([2, 2, 0, 0, "Synonym-Of"]), entities=False)
    scorer = get_scorer("scier-re")
    # Without the option the reversed copy is just wrong: A's and B's relations right, P = 2/3.
    assert scorer.score(gold_bytes(), data).metrics["re_p"] == pytest.approx(2 / 3)
    found = refusal("scier-re", data, {"symmetric_labels": ["Synonym-Of"]})
    assert (
        'predicted_relations[0][1]: repeated row [2, 2, 0, 0, "Synonym-Of"] (the same as predicted_relations[0][0]'
        in found
    )
    assert "symmetric label" in found


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the file is empty"),
        (b"\n \r\n", "the file is empty"),
        (b"{'doc_id': 'A'}\n", "line 1: column 2: not valid JSON"),
        (b'{"doc_id": "A", "doc_id": "B"}\n', "appears more than once"),
        (b'{"doc_id": "A", "predicted_ner": [[[1e999, 2, "M"]], []]}\n', "overflows to infinity"),
        (b"\xff\xfe{}", "is not UTF-8"),
    ],
)
def test_unreadable_files_are_refused(data: bytes, message: str) -> None:
    assert message in refusal("scier-ere", data)


def test_a_line_without_a_document_does_not_add_missing_document_noise() -> None:
    found = refusal("scier-ere", jsonl(perfect_lines()[:1]) + b"not json\n")
    assert "line 2" in found
    assert "has no line" not in found


def test_many_problems_are_reported_at_once() -> None:
    def change(lines: Lines) -> None:
        lines[0]["predicted_ner"][0][0][0] = True
        lines[0]["predicted_relations"][0][0] = [2, 2, 9, 9, "Used-For"]
        lines[1]["predicted_ner"] = [[], []]
        lines.append({"doc_id": "Z"})

    found = refusal("scier-ere", mutated(change))
    assert "4 problems." in found
    assert "start must be an integer" in found
    assert "object span 9-9 is outside" in found
    assert "predicted_ner has 2 sentence lists" in found
    assert 'unknown doc_id "Z"' in found


def test_accepted_layouts_give_the_same_numbers() -> None:
    scorer = get_scorer("scier-ere")
    base = scorer.score(gold_bytes(), jsonl(predicted_lines())).metrics
    lines = predicted_lines()
    lines[0]["sentences"] = GOLD_DOCS[0]["sentences"]  # an exact copy of the gold sentences is fine
    lines[1]["doc_tokens"] = ["anything"]  # other keys are ignored
    lines[1]["ner"] = "ignored"
    text = "\ufeff" + "\r\n\r\n".join(json.dumps(line) for line in lines)  # BOM, CRLF, blank lines, no final newline
    assert scorer.score(gold_bytes(), text.encode()).metrics == base


# -- the gold file ------------------------------------------------------------------------------
def gold_refusal(docs: list[Any]) -> str:
    with pytest.raises(InvalidGold) as caught:
        get_scorer("scier-ere").parse_gold(jsonl(docs))
    return str(caught.value)


def _gold(change: Callable[[list[dict[str, Any]]], object]) -> list[Any]:
    docs = json.loads(json.dumps(GOLD_DOCS))
    change(docs)
    return list(docs)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.append(d[0]), 'line 3: doc_id "A" repeated (first on line 1)'),
        (
            lambda d: d[0]["ner"].pop(),
            'line 1, document "A": ner has 1 sentence lists; the gold document has 2 sentences',
        ),
        (lambda d: d[1]["relations"].append([]), "relations has 2 sentence lists; the gold document has 1 sentences"),
        (lambda d: d[0]["ner"][0].append([9, 9, "Task"]), "ner[0][2]: span 9-9 is outside sentence 0 (tokens 0-5)"),
        (lambda d: d[1]["relations"][0].append([2, 0, 0, 0, "X"]), "relations[0][1]: subject start 2 > end 0"),
        (lambda d: d[0].pop("relations"), 'line 1: missing key(s) "relations"'),
        (lambda d: d[0].update(doc_id=7), "line 1: doc_id must be a string, found the integer 7"),
        (
            lambda d: d[0]["sentences"].__setitem__(1, "BERT is a model"),
            "sentences[1]: expected a list of token strings",
        ),
        (lambda d: d.append("A"), "line 3: expected a JSON object with doc_id, sentences, ner and relations"),
    ],
)
def test_gold_refusals(change: Callable[[list[dict[str, Any]]], object], message: str) -> None:
    assert message in gold_refusal(_gold(change))


def test_gold_repeated_rows_are_kept() -> None:
    docs = _gold(lambda d: d[1]["relations"][0].append([0, 0, 2, 2, "Synonym-Of"]))
    gold = get_scorer("scier-ere").parse_gold(jsonl(docs))
    assert gold.documents["B"].relations == [[(0, 0, 2, 2, "Synonym-Of"), (0, 0, 2, 2, "Synonym-Of")]]
    assert gold.documents["A"].bounds == [(0, 5), (6, 9)]


# -- fuzzing: nothing but a ValidationError may escape the parsers ------------------------------
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 12)
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["A", "B", "Method", "Used-For", "Synonym-Of", ""])
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON structure that a mutation may replace or delete."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


@st.composite
def mutations(draw: st.DrawFn, base: list[Any]) -> list[Any]:
    """A copy of ``base`` with a few values replaced, deleted or inserted."""
    value = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(value)[1:]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent: Any = value
        for step in path[:-1]:
            parent = parent[step]
        # "plausible" keeps many files valid, so that scoring, not only refusing, is exercised.
        action = draw(st.sampled_from(["plausible", "replace", "delete", "insert"]))
        if action == "plausible":
            parent[path[-1]] = draw(st.integers(0, 9) | st.sampled_from(["Method", "Task", "Used-For", "Synonym-Of"]))
        elif action == "replace":
            parent[path[-1]] = draw(json_values)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, list):
            parent.insert(path[-1], draw(json_values))
        else:
            parent[draw(st.text(max_size=6))] = draw(json_values)
    return list(value) if isinstance(value, list) else [value]


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _score_or_refuse(name: str, gold: bytes, submission: bytes, options: dict[str, Any] | None = None) -> None:
    scorer = get_scorer(name, options)
    try:
        report = scorer.score(gold, submission)
    except ValidationError as exc:
        assert str(exc).startswith("The ")
        assert exc.problems
        return
    assert all(0.0 <= value <= 1.0 for value in report.metrics.values())


@FUZZ
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_are_read_or_refused_cleanly(data: bytes) -> None:
    try:
        get_scorer("scier-ere").parse_gold(data)
    except InvalidGold as exc:
        assert exc.problems
    for name in ("scier-ere", "scier-re"):
        scorer = get_scorer(name)
        try:
            scorer.parse_submission(data, scorer.public_view(scorer.parse_gold(gold_bytes())))
        except InvalidSubmission as exc:
            assert exc.problems


@FUZZ
@given(lines=mutations(predicted_lines()), symmetric=st.booleans())
def test_mutated_submissions_are_scored_or_refused(lines: list[Any], symmetric: bool) -> None:
    options = {"symmetric_labels": ["Synonym-Of"]} if symmetric else None
    _score_or_refuse("scier-ere", gold_bytes(), jsonl(lines), options)
    _score_or_refuse("scier-re", gold_bytes(), jsonl(lines), options)


@FUZZ
@given(docs=mutations(GOLD_DOCS))
def test_mutated_gold_files_are_read_or_refused(docs: list[Any]) -> None:
    _score_or_refuse("scier-ere", jsonl(docs), jsonl(perfect_lines()))
    _score_or_refuse("scier-re", jsonl(docs), jsonl(perfect_lines(entities=False)))
