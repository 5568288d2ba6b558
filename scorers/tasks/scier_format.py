"""Reading SciER's span ("PLM") JSON Lines: the gold release and the participants' predictions.

Both files use document-level token offsets, end inclusive, with one list of rows per sentence:
entity rows ``[start, end, type]`` and relation rows ``[start1, end1, start2, end2, label]``, within
the size limits of ``RowLimits``. This module only validates and builds typed documents;
``scorers.tasks.scier`` scores them. Every problem is collected with its place (line, document,
``predicted_ner[3][5]``) and what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from scorers.errors import InvalidGold, InvalidSubmission, Problems
from scorers.families.spans import Entity, Relation, relation_key
from scorers.io import gc_paused, iter_json_lines
from scorers.tasks.limits import Limits, bound

#: ``(first, last)`` token offset of a sentence; ``last < first`` for a sentence without tokens.
Bounds = tuple[int, int]

ENTITY_FIELDS = ("start", "end", "type")
RELATION_FIELDS = ("start1", "end1", "start2", "end2", "label")


@dataclass(frozen=True)
class RowLimits(Limits):
    """Size limits of a file's rows, for gold and predictions alike. The release holds at most 36 entity and 27
    relation rows in a sentence, labels of 14 characters, 3 entity types and 9 relation labels."""

    entities_per_sentence: int = bound(1_000, "entity rows accepted in one sentence")
    relations_per_sentence: int = bound(1_000, "relation rows accepted in one sentence")
    label_chars: int = bound(200, "characters accepted in one entity type or relation label")
    labels: int = bound(100, "distinct entity types, and distinct relation labels, accepted in one file")


@dataclass(frozen=True)
class GoldDocument:
    """One gold paper: a digest of each sentence's tokens (``sentence_digest``), the sentences' token bounds and
    the gold rows of each sentence."""

    doc_id: str
    sentence_digests: list[int]
    bounds: list[Bounds]
    entities: list[list[Entity]]
    relations: list[list[Relation]]


@dataclass(frozen=True)
class SciERGold:
    """The gold documents, keyed by ``doc_id`` in file order."""

    documents: dict[str, GoldDocument]


@dataclass(frozen=True)
class PredictedDocument:
    """One document's predictions; ``entities`` is None where the task does not ask for them."""

    entities: list[list[Entity]] | None
    relations: list[list[Relation]]


#: Predictions keyed by ``doc_id``; every gold document has one.
SciERSubmission = dict[str, PredictedDocument]


def show(value: Any, limit: int = 80) -> str:
    """A short JSON rendering of a value for messages."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError):
        return "a deeply nested value"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def kind(value: Any) -> str:
    """What a JSON value is, in words (``a string``, ``true``, ``a list``)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        return f"the string {show(value, 40)}"
    if isinstance(value, int):
        return f"the integer {value}" if abs(value) < 10**40 else "a huge integer"
    if isinstance(value, float):
        return f"the number {value!r}"
    return "a list" if isinstance(value, list) else "an object"


def _offset(value: int) -> str:
    # JSON integers may have thousands of digits; a message needs only to show that it is far off.
    text = str(value)
    return text if len(text) <= 20 else f"{text[:8]}...({len(text)} digits)"


def _span_problem(start: int, end: int, bounds: Bounds, sentence: int, what: str) -> str | None:
    if start > end:
        return f"{what}start {_offset(start)} > end {_offset(end)}"
    first, last = bounds
    if start < first or end > last:
        inside = f"tokens {first}-{last}" if last >= first else "no tokens"
        return f"{what}span {_offset(start)}-{_offset(end)} is outside sentence {sentence} ({inside})"
    return None


def _row_problem(row: Any, fields: tuple[str, ...], bounds: Bounds, sentence: int, limits: RowLimits) -> str:
    """Why a row that failed the fast check is wrong (the slow path, for messages only)."""
    shape = "[" + ", ".join(fields) + "]"
    if not isinstance(row, list):
        return f"expected a row {shape}, found {kind(row)}"
    if len(row) != len(fields):
        return f"expected a row {shape} of {len(fields)} items, found {len(row)} items: {show(row)}"
    for name, value in zip(fields[:-1], row, strict=False):
        if type(value) is not int:
            return f"{name} must be an integer, found {kind(value)}"
    if type(row[-1]) is not str:
        return f"{fields[-1]} must be a string, found {kind(row[-1])}"
    if len(row[-1]) > limits.label_chars:
        return f"{fields[-1]} has " + limits.exceeded("label_chars", len(row[-1]), "characters")
    if len(fields) == 3:
        return _span_problem(row[0], row[1], bounds, sentence, "") or "invalid row"
    return (
        _span_problem(row[0], row[1], bounds, sentence, "subject ")
        or _span_problem(row[2], row[3], bounds, sentence, "object ")
        or "invalid row"
    )


class RowReader:
    """Reads ``ner``-like and ``relations``-like values: one list of rows per sentence.

    The fast checks are written out per row width because they run once per row of a file that
    may hold millions; anything that fails them goes to ``_row_problem`` for the message. The
    distinct types and labels of the rows read are gathered for ``check_labels``.
    """

    def __init__(
        self,
        problems: Problems,
        *,
        refuse_repeats: bool,
        symmetric: Set[str] = frozenset(),
        limits: RowLimits = RowLimits(),
    ) -> None:
        self.problems = problems
        self.refuse_repeats = refuse_repeats
        self.symmetric = symmetric
        self.limits = limits
        self.types: set[str] = set()
        self.labels: set[str] = set()

    def check_labels(self) -> None:
        """Report a file whose rows use more distinct entity types or relation labels than the limit."""
        for what, seen in (("entity types", self.types), ("relation labels", self.labels)):
            if len(seen) > self.limits.labels:
                self.problems.add("", self.limits.exceeded("labels", len(seen), f"distinct {what} in the file"))

    def _too_many(self, rows: list[Any], limit: str, what: str, place: str) -> bool:
        """Whether a sentence holds more rows than the limit (reported if so)."""
        if len(rows) <= getattr(self.limits, limit):
            return False
        self.problems.add(place, self.limits.exceeded(limit, len(rows), what))
        return True

    def _sentence_lists(self, value: Any, key: str, bounds: list[Bounds], where: str) -> bool:
        if not isinstance(value, list):
            self.problems.add(where, f"{key} must be a list with one list of rows per sentence, found {kind(value)}")
            return False
        if len(value) != len(bounds):
            self.problems.add(
                where, f"{key} has {len(value)} sentence lists; the gold document has {len(bounds)} sentences"
            )
            return False
        return True

    def _repeat(self, seen: dict[Any, int], identity: Any, i: int, row: Any, where: str, rows_name: str) -> bool:
        """Whether row ``i`` repeats an earlier row of its sentence (reported if so)."""
        first = seen.setdefault(identity, i)
        if first == i:
            return False
        message = f"repeated row {show(row)} (the same as {rows_name}[{first}]"
        if len(row) == 5 and row[4] in self.symmetric:
            message += f"; {show(row[4])} is a symmetric label, so the order of its arguments does not matter"
        self.problems.add(f"{where}, {rows_name}[{i}]", message + ")")
        return True

    def entities(self, value: Any, key: str, bounds: list[Bounds], where: str) -> list[list[Entity]] | None:
        if not self._sentence_lists(value, key, bounds, where):
            return None
        out: list[list[Entity]] = []
        max_chars, types = self.limits.label_chars, self.types
        for k, rows in enumerate(value):
            first, last = bounds[k]
            if not isinstance(rows, list):
                self.problems.add(f"{where}, {key}[{k}]", f"expected a list of rows, found {kind(rows)}")
                out.append([])
                continue
            if self._too_many(rows, "entities_per_sentence", "entity rows", f"{where}, {key}[{k}]"):
                out.append([])
                continue
            parsed: list[Entity] = []
            seen: dict[Any, int] = {}
            for i, row in enumerate(rows):
                if type(row) is list and len(row) == 3:
                    s, e, t = row
                    if (
                        type(s) is int
                        and type(e) is int
                        and type(t) is str
                        and len(t) <= max_chars
                        and first <= s <= e <= last
                    ):
                        entity = (s, e, t)
                        if self.refuse_repeats and self._repeat(seen, entity, i, row, where, f"{key}[{k}]"):
                            continue
                        parsed.append(entity)
                        types.add(t)
                        continue
                self.problems.add(
                    f"{where}, {key}[{k}][{i}]", _row_problem(row, ENTITY_FIELDS, bounds[k], k, self.limits)
                )
            out.append(parsed)
        return out

    def relations(self, value: Any, key: str, bounds: list[Bounds], where: str) -> list[list[Relation]] | None:
        if not self._sentence_lists(value, key, bounds, where):
            return None
        out: list[list[Relation]] = []
        symmetric, max_chars, labels = self.symmetric, self.limits.label_chars, self.labels
        for k, rows in enumerate(value):
            first, last = bounds[k]
            if not isinstance(rows, list):
                self.problems.add(f"{where}, {key}[{k}]", f"expected a list of rows, found {kind(rows)}")
                out.append([])
                continue
            if self._too_many(rows, "relations_per_sentence", "relation rows", f"{where}, {key}[{k}]"):
                out.append([])
                continue
            parsed: list[Relation] = []
            seen: dict[Any, int] = {}
            for i, row in enumerate(rows):
                if type(row) is list and len(row) == 5:
                    s1, e1, s2, e2, label = row
                    if (
                        type(s1) is int
                        and type(e1) is int
                        and type(s2) is int
                        and type(e2) is int
                        and type(label) is str
                        and len(label) <= max_chars
                        and first <= s1 <= e1 <= last
                        and first <= s2 <= e2 <= last
                    ):
                        relation = (s1, e1, s2, e2, label)
                        # With a symmetric label, [a, b] and [b, a] are one relation: listing both
                        # would be counted correct twice, so it is a repeat.
                        identity = relation_key(relation, symmetric)
                        if self.refuse_repeats and self._repeat(seen, identity, i, row, where, f"{key}[{k}]"):
                            continue
                        parsed.append(relation)
                        labels.add(label)
                        continue
                self.problems.add(
                    f"{where}, {key}[{k}][{i}]", _row_problem(row, RELATION_FIELDS, bounds[k], k, self.limits)
                )
            out.append(parsed)
        return out


def _sentences(value: Any, where: str, problems: Problems) -> list[list[str]] | None:
    if not isinstance(value, list):
        problems.add(where, f"sentences must be a list of token lists, found {kind(value)}")
        return None
    for k, tokens in enumerate(value):
        if not isinstance(tokens, list) or not all(type(t) is str for t in tokens):
            problems.add(f"{where}, sentences[{k}]", "expected a list of token strings")
            return None
    return value


def sentence_digest(tokens: Any) -> int | None:
    """A digest of one sentence's tokens; None for anything but a list of strings.

    The gold keeps digests rather than the tokens (which took two thirds of a parsed gold's memory), only to tell
    whether a submission's optional copy of the sentences is the gold's. Python's hash of the token tuple is enough for
    that: equal tokens give equal digests, and a collision (about 1 in 2**64, under a seed that changes with the
    process) would only let through a copy that is not used for anything else.
    """
    if type(tokens) is not list or not all(type(token) is str for token in tokens):
        return None
    return hash(tuple(tokens))


def _bounds(sentences: list[list[str]]) -> list[Bounds]:
    bounds: list[Bounds] = []
    start = 0
    for tokens in sentences:
        bounds.append((start, start + len(tokens) - 1))
        start += len(tokens)
    return bounds


@gc_paused()  # many small containers, no cycles: see scorers.io.gc_paused
def parse_gold(data: bytes, limits: RowLimits = RowLimits()) -> SciERGold:
    """Validate a span-format gold file; refuse with ``InvalidGold`` naming every problem found."""
    problems = Problems(InvalidGold)
    rows = RowReader(problems, refuse_repeats=False, limits=limits)
    documents: dict[str, GoldDocument] = {}
    first_line: dict[str, int] = {}
    for number, obj in iter_json_lines(data, problems, InvalidGold):
        where = f"line {number}"
        if not isinstance(obj, dict):
            problems.add(where, f"expected a JSON object with doc_id, sentences, ner and relations, found {kind(obj)}")
            continue
        missing = [key for key in ("doc_id", "sentences", "ner", "relations") if key not in obj]
        if missing:
            problems.add(where, "missing key(s) " + ", ".join(f'"{key}"' for key in missing))
            continue
        doc_id = obj["doc_id"]
        if not isinstance(doc_id, str):
            problems.add(where, f"doc_id must be a string, found {kind(doc_id)}")
            continue
        if doc_id in first_line:
            problems.add(where, f"doc_id {show(doc_id)} repeated (first on line {first_line[doc_id]})")
            continue
        first_line[doc_id] = number
        where = f"line {number}, document {show(doc_id)}"
        sentences = _sentences(obj["sentences"], where, problems)
        if sentences is None:
            continue
        bounds = _bounds(sentences)
        entities = rows.entities(obj["ner"], "ner", bounds, where)
        relations = rows.relations(obj["relations"], "relations", bounds, where)
        if entities is not None and relations is not None:
            digests = [hash(tuple(tokens)) for tokens in sentences]  # as sentence_digest; _sentences checked them
            documents[doc_id] = GoldDocument(doc_id, digests, bounds, entities, relations)
    rows.check_labels()
    problems.raise_if_any()
    return SciERGold(documents)


@gc_paused()
def parse_submission(
    data: bytes,
    gold: SciERGold,
    *,
    with_entities: bool,
    symmetric: Set[str] = frozenset(),
    limits: RowLimits = RowLimits(),
) -> SciERSubmission:
    """Validate predictions against the gold; refuse with ``InvalidSubmission`` naming every problem.

    ``with_entities`` says whether ``predicted_ner`` is required and kept; when it is not, a
    ``predicted_ner`` that is present is still checked (a malformed file is a mistake worth
    reporting) but dropped.
    """
    problems = Problems(InvalidSubmission)
    reader = _SubmissionReader(gold, problems, with_entities=with_entities, symmetric=symmetric, limits=limits)
    # A line that names no document (not JSON, no doc_id) makes "document X has no line" mere noise.
    unnamed = False
    accounted = problems.total
    for number, obj in iter_json_lines(data, problems, InvalidSubmission):
        unnamed |= problems.total > accounted  # the reader skipped a line that is not JSON
        unnamed |= not reader.line(number, obj)
        accounted = problems.total
    unnamed |= problems.total > accounted
    reader.rows.check_labels()
    if not unnamed:
        for doc_id in gold.documents:
            if doc_id not in reader.first_line:
                problems.add(f"doc_id {show(doc_id)}", "has no line; every gold document needs one")
    problems.raise_if_any()
    return reader.documents


class _SubmissionReader:
    """Checks one submission line at a time, remembering which documents were seen where."""

    def __init__(
        self, gold: SciERGold, problems: Problems, *, with_entities: bool, symmetric: Set[str], limits: RowLimits
    ) -> None:
        self.gold = gold
        self.problems = problems
        self.rows = RowReader(problems, refuse_repeats=True, symmetric=symmetric, limits=limits)
        self.with_entities = with_entities
        self.required = ("predicted_ner", "predicted_relations") if with_entities else ("predicted_relations",)
        self.first_line: dict[str, int] = {}
        self.documents: SciERSubmission = {}

    def line(self, number: int, obj: Any) -> bool:
        """Check and keep one line; False when it names no document at all."""
        problems = self.problems
        where = f"line {number}"
        if not isinstance(obj, dict):
            problems.add(where, f"expected a JSON object with doc_id, {', '.join(self.required)}, found {kind(obj)}")
            return False
        if "doc_id" not in obj:
            problems.add(where, 'missing key "doc_id"')
            return False
        doc_id = obj["doc_id"]
        if not isinstance(doc_id, str):
            problems.add(where, f"doc_id must be a string, found {kind(doc_id)}")
            return False
        doc = self.gold.documents.get(doc_id)
        if doc is None:
            problems.add(where, f"unknown doc_id {show(doc_id)} (not a document of the gold)")
            return True
        if doc_id in self.first_line:
            problems.add(where, f"doc_id {show(doc_id)} repeated (first on line {self.first_line[doc_id]})")
            return True
        self.first_line[doc_id] = number
        where = f"line {number}, document {show(doc_id)}"
        missing = [key for key in self.required if key not in obj]
        if missing:
            problems.add(where, "missing key(s) " + ", ".join(f'"{key}"' for key in missing))
            return True
        if "sentences" in obj:
            _check_sentences(obj["sentences"], doc, where, problems)
        entities = None
        if "predicted_ner" in obj:
            entities = self.rows.entities(obj["predicted_ner"], "predicted_ner", doc.bounds, where)
        relations = self.rows.relations(obj["predicted_relations"], "predicted_relations", doc.bounds, where)
        if relations is not None and (entities is not None or not self.with_entities):
            self.documents[doc_id] = PredictedDocument(entities if self.with_entities else None, relations)
        return True


def _check_sentences(value: Any, doc: GoldDocument, where: str, problems: Problems) -> None:
    """An optional ``sentences`` copy must equal the gold's, so offsets refer to the same tokens."""
    gold = doc.sentence_digests
    if not isinstance(value, list) or len(value) != len(gold):
        size = f"{len(value)} sentences" if isinstance(value, list) else kind(value)
        expected = f"gold has {len(gold)}"
        problems.add(where, f"sentences differs from the gold ({size}, {expected}); omit it or copy it from the gold")
        return
    k = next((k for k, tokens in enumerate(value) if sentence_digest(tokens) != gold[k]), None)
    if k is not None:
        problems.add(where, f"sentences[{k}] differs from the gold's sentence {k}; omit it or copy it from the gold")


def symmetric_labels(settings: Mapping[str, Any]) -> frozenset[str]:
    """The ``symmetric_labels`` option as a set."""
    return frozenset(settings.get("symmetric_labels", ()))
