"""SciER pairs: the same documents and sentences, other entities (``scier-ere`` only) and relations."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.scorers.secrecy import GARBAGE, IDS, Pair, jsonl, pairs_for

TYPES = ("Method", "Task")
LABELS = ("Used", "Part")
OPTIONS = {"max_entities_per_sentence": 3, "max_relations_per_sentence": 3, "max_label_chars": 6, "max_labels": 2}
Doc = tuple[str, list[list[str]]]


@st.composite
def _documents(draw: st.DrawFn) -> list[Doc]:
    ids = draw(st.lists(IDS, min_size=1, max_size=3, unique=True))
    words = st.lists(st.sampled_from(["we", "use", "BERT", "for", "NER", "."]), min_size=1, max_size=4)
    return [(doc_id, draw(st.lists(words, min_size=1, max_size=3))) for doc_id in ids]


def _bounds(sentences: list[list[str]]) -> list[tuple[int, int]]:
    out, start = [], 0
    for tokens in sentences:
        out.append((start, start + len(tokens) - 1))
        start += len(tokens)
    return out


def _span(draw: st.DrawFn, first: int, last: int) -> tuple[int, int]:
    start = draw(st.integers(first, last))
    return start, draw(st.integers(start, last))


def _entities(draw: st.DrawFn, bounds: list[tuple[int, int]], types: tuple[str, ...] = TYPES) -> list[list[Any]]:
    return [
        [[*_span(draw, first, last), draw(st.sampled_from(types))] for _ in range(draw(st.integers(0, 3)))]
        for first, last in bounds
    ]


def _relations(draw: st.DrawFn, bounds: list[tuple[int, int]], labels: tuple[str, ...] = LABELS) -> list[list[Any]]:
    return [
        [
            [*_span(draw, first, last), *_span(draw, first, last), draw(st.sampled_from(labels))]
            for _ in range(draw(st.integers(0, 3)))
        ]
        for first, last in bounds
    ]


def _unique(rows: list[list[Any]]) -> list[list[Any]]:
    return [list(row) for row in dict.fromkeys(map(tuple, rows))]


def _gold(documents: list[Doc], entities: list[Any], relations: list[Any]) -> bytes:
    return jsonl(
        [
            {"doc_id": doc_id, "sentences": sentences, "ner": ner, "relations": rel}
            for (doc_id, sentences), ner, rel in zip(documents, entities, relations, strict=True)
        ]
    )


def _pair(draw: st.DrawFn, *, same_entities: bool) -> Pair:
    documents = draw(_documents())
    bounds = [_bounds(sentences) for _, sentences in documents]
    entities_a = [_entities(draw, b) for b in bounds]
    entities_b = entities_a if same_entities else [_entities(draw, b) for b in bounds]
    gold_a = _gold(documents, entities_a, [_relations(draw, b) for b in bounds])
    gold_b = _gold(documents, entities_b, [_relations(draw, b) for b in bounds])

    def line(k: int, **changes: Any) -> dict[str, Any]:
        ner = [_unique(rows) for rows in _entities(draw, bounds[k])]
        rel = [_unique(rows) for rows in _relations(draw, bounds[k])]
        return {"doc_id": documents[k][0], "predicted_ner": ner, "predicted_relations": rel, **changes}

    n = len(documents)
    valid = [line(k) for k in range(n)]
    k = draw(st.integers(0, n - 1))
    first, last = bounds[k][0]
    sentence = [[first, first, "Method"]]
    edited = [[*valid[:k], {**valid[k], **change}, *valid[k + 1 :]] for change in _changes(draw, bounds[k])]
    submissions = [
        [],
        valid,
        valid[: draw(st.integers(0, n - 1))],  # documents left out
        [*valid, {**valid[0], "doc_id": "zz-unknown"}],
        [*valid, valid[k]],  # a repeated doc_id
        [*valid[:k], {"doc_id": documents[k][0]}, *valid[k + 1 :]],  # keys missing
        [*valid[:k], {**valid[k], "sentences": documents[k][1]}, *valid[k + 1 :]],
        [*valid[:k], {**valid[k], "sentences": [["other"]]}, *valid[k + 1 :]],
        [*valid[:k], {**valid[k], "predicted_ner": [sentence] * (len(bounds[k]) + 1)}, *valid[k + 1 :]],
        [*valid[:k], {**valid[k], "predicted_ner": [[[last + 1, last + 1, "Task"]]] * len(bounds[k])}, *valid[k + 1 :]],
        *edited,
    ]
    return Pair(gold_a, gold_b, (*(jsonl(lines) for lines in submissions), b"{}\n[]", *GARBAGE), OPTIONS)


def _changes(draw: st.DrawFn, bounds: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """Edits of one document's predictions that break a rule or a size limit."""
    first, last = bounds[0]
    empty: list[list[Any]] = [[] for _ in bounds]
    entity, relation = [first, last, "Method"], [first, first, last, last, "Used"]

    def in_first(rows: list[Any]) -> list[list[Any]]:
        return [rows, *empty[1:]]

    return [
        {"predicted_ner": in_first([entity, entity])},  # a repeated row
        {"predicted_ner": in_first([[first, "x", "Task"]])},
        {"predicted_relations": in_first([[first, last, "Used"]])},
        {"predicted_ner": in_first([[first, first, t] for t in ("A", "B", "C", "D")])},  # rows per sentence
        {"predicted_relations": in_first([[*relation[:4], f"L{i}"] for i in range(4)])},
        {"predicted_ner": in_first([[first, first, "LongLabel"]])},  # label_chars
        {"predicted_ner": in_first([[first, first, t] for t in ("A", "B", "C")])},  # labels in the file
        {"predicted_relations": in_first([[*relation[:4], label] for label in ("A", "B", "C")])},
        {"predicted_relations": "none"},
        {"predicted_ner": _entities(draw, bounds, ("Method", "Task", "Data"))},
    ]


@pairs_for("scier-ere")
@st.composite
def end_to_end(draw: st.DrawFn) -> Pair:
    return _pair(draw, same_entities=False)


@pairs_for("scier-re")
@st.composite
def relations(draw: st.DrawFn) -> Pair:
    # scier-re gives the gold entities as the task's input: they are public, only the relations are the answer.
    return _pair(draw, same_entities=True)
