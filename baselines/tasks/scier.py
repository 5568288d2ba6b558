"""SciER files as the baselines read them: annotated training sentences and the documents to tag.

Training files are JSON Lines in either release format, told apart line by line:
- the sentence ("LLM") format, ``{"sentence", "ner": [[text, type]], "rel": [[subject, label, object]]}``,
  has no offsets, so each mention is placed at the first token sequence of its sentence that
  spells it (a mention that is not found still counts for the gazetteer);
- the span ("PLM") format, ``{"sentences", "ner", "relations"}`` with document-level offsets.
Public inputs are ``{"doc_id", "sentences"}`` lines (``scier-ere``), with ``ner`` for ``scier-re``.
All spans here are ``(start, end, type)`` token offsets with the end inclusive.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from baselines.errors import InvalidInputs
from baselines.io import describe_files, first_line, json_objects, pick_file

Span = tuple[int, int, str]
Relation = tuple[int, int, int, int, str]


@dataclass
class TrainingSentence:
    """One annotated sentence, offsets relative to the sentence."""

    tokens: list[str]
    mentions: list[tuple[str, str]] = field(default_factory=list)
    entities: list[Span] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


@dataclass(frozen=True)
class Document:
    """A document to tag: its sentences, where each starts, and the given entities (``scier-re``)."""

    doc_id: str
    sentences: list[list[str]]
    offsets: list[int]
    entities: list[list[Span]] | None


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_span(row: Any) -> bool:
    return (
        isinstance(row, list)
        and len(row) == 3
        and all(isinstance(x, int) and not isinstance(x, bool) for x in row[:2])
        and isinstance(row[2], str)
    )


def _is_relation(row: Any) -> bool:
    return (
        isinstance(row, list)
        and len(row) == 5
        and all(isinstance(x, int) and not isinstance(x, bool) for x in row[:4])
        and isinstance(row[4], str)
    )


def _locate(tokens: list[str], mention: str) -> tuple[int, int] | None:
    words = mention.split()
    width = len(words)
    for start in range(len(tokens) - width + 1):
        if width and tokens[start : start + width] == words:
            return start, start + width - 1
    return None


def _from_sentence_format(label: str, number: int, line: dict[str, Any]) -> TrainingSentence:
    text, ner, rel = line["sentence"], line["ner"], line.get("rel", [])
    pairs_ok = isinstance(ner, list) and all(isinstance(p, list) and len(p) == 2 and _is_str_list(p) for p in ner)
    triples_ok = isinstance(rel, list) and all(isinstance(t, list) and len(t) == 3 and _is_str_list(t) for t in rel)
    if not isinstance(text, str) or not pairs_ok or not triples_ok:
        raise InvalidInputs(
            f"{label}, line {number}: expected sentence as a string, ner as [text, type] pairs and rel as "
            "[subject, label, object] triples"
        )
    sentence = TrainingSentence(text.split(" "))
    where: dict[str, tuple[int, int, str]] = {}
    for mention, kind in ner:
        sentence.mentions.append((mention, kind))
        place = _locate(sentence.tokens, mention)
        if place is not None and mention not in where:
            where[mention] = (*place, kind)
            sentence.entities.append(where[mention])
    for subject, relation, obj in rel:
        if subject in where and obj in where:
            (s1, e1, _), (s2, e2, _) = where[subject], where[obj]
            sentence.relations.append((s1, e1, s2, e2, relation))
    return sentence


def _from_span_format(label: str, number: int, line: dict[str, Any]) -> list[TrainingSentence]:
    sentences, ner, relations = line["sentences"], line["ner"], line.get("relations")
    count = len(sentences) if isinstance(sentences, list) else -1
    if (
        count < 0
        or not all(_is_str_list(s) for s in sentences)
        or not isinstance(ner, list)
        or len(ner) != count
        or not all(isinstance(rows, list) and all(_is_span(r) for r in rows) for rows in ner)
    ):
        raise InvalidInputs(
            f"{label}, line {number}: expected sentences as token lists and ner as one list of "
            "[start, end, type] rows per sentence"
        )
    if relations is None:
        relations = [[] for _ in sentences]
    if not isinstance(relations, list) or len(relations) != count:
        raise InvalidInputs(f"{label}, line {number}: expected one relations list per sentence")
    out, offset = [], 0
    for k, tokens in enumerate(sentences):
        sentence = TrainingSentence(list(tokens))
        for start, end, kind in ner[k]:
            span = (start - offset, end - offset, kind)
            if not 0 <= span[0] <= span[1] < len(tokens):
                raise InvalidInputs(f"{label}, line {number}, ner[{k}]: span {[start, end]} lies outside its sentence")
            sentence.entities.append(span)
            sentence.mentions.append((" ".join(tokens[span[0] : span[1] + 1]), kind))
        rows: list[Any] = relations[k] if isinstance(relations[k], list) else [None]
        for row in rows:
            if not _is_relation(row):
                raise InvalidInputs(f"{label}, line {number}, relations[{k}]: expected [s1, e1, s2, e2, label] rows")
            s1, e1, s2, e2 = (x - offset for x in row[:4])
            sentence.relations.append((s1, e1, s2, e2, row[4]))
        out.append(sentence)
        offset += len(tokens)
    return out


def read_training(files: Mapping[str, bytes]) -> list[TrainingSentence]:
    """Annotated sentences from every JSON Lines training file, in either release format."""
    out: list[TrainingSentence] = []
    for name in sorted(files):
        if not name.lower().endswith(".jsonl"):
            continue
        label = f"training file {name!r}"
        for number, line in json_objects(label, files[name]):
            if "sentence" in line and "ner" in line:
                out.append(_from_sentence_format(label, number, line))
            elif "sentences" in line and "ner" in line:
                out.extend(_from_span_format(label, number, line))
            else:
                raise InvalidInputs(
                    f"{label}, line {number}: expected a sentence line (sentence, ner, rel) or a document line "
                    "(sentences, ner, relations)"
                )
    if not any(s.mentions for s in out):
        raise InvalidInputs(
            f"no annotated training sentences: expected a SciER JSON Lines file among the training files "
            f"({describe_files(files)})"
        )
    return out


def read_documents(files: Mapping[str, bytes], *, with_entities: bool) -> list[Document]:
    """The documents of the phase's ``inputs.jsonl`` in file order; entities too for ``scier-re``."""
    name, data = pick_file(files, "public inputs", (".jsonl",), lambda data: b'"doc_id"' in first_line(data))
    label = f"input file {name!r}"
    required = ("doc_id", "sentences", "ner") if with_entities else ("doc_id", "sentences")
    documents, seen = [], set()
    for number, line in json_objects(label, data, required):
        doc_id, sentences = line["doc_id"], line["sentences"]
        if not isinstance(doc_id, str) or doc_id in seen:
            raise InvalidInputs(f"{label}, line {number}: doc_id must be a string not seen before, found {doc_id!r}")
        seen.add(doc_id)
        if not isinstance(sentences, list) or not all(_is_str_list(s) for s in sentences):
            raise InvalidInputs(f"{label}, line {number}: sentences must be a list of token lists")
        offsets, total = [], 0
        for tokens in sentences:
            offsets.append(total)
            total += len(tokens)
        entities = None
        if with_entities:
            ner = line["ner"]
            if (
                not isinstance(ner, list)
                or len(ner) != len(sentences)
                or not all(isinstance(rows, list) and all(_is_span(r) for r in rows) for rows in ner)
            ):
                raise InvalidInputs(
                    f"{label}, line {number}: ner must hold one list of [start, end, type] rows per sentence"
                )
            entities = [[(r[0], r[1], r[2]) for r in rows] for rows in ner]
        documents.append(Document(doc_id, sentences, offsets, entities))
    return documents
