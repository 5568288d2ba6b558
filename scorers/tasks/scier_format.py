"""Reading SciER's span ("PLM") JSON Lines: the gold release and the participants' predictions.

Both files use document-level token offsets, end inclusive, with one list of rows per sentence:
entity rows ``[start, end, type]`` and relation rows ``[start1, end1, start2, end2, label]``, within
the size limits of ``RowLimits`` (the rows are read by ``scorers.tasks.scier_rows``). Predictions are
validated against ``SciERPublic``, what participants are given (each document's sentences, and in
``scier-re`` its gold entities), never against the gold relations or, in ``scier-ere``, the gold
entities. This module only validates and builds typed documents; ``scorers.tasks.scier`` scores them.
Every problem is collected with its place (line, document, ``predicted_ner[3][5]``) and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from scorers.errors import InvalidGold, InvalidSubmission, Problems
from scorers.families.spans import Entity, Relation
from scorers.io import gc_paused, iter_json_lines
from scorers.tasks.scier_rows import Bounds, RowLimits, RowReader, kind, show

DEFAULT_LIMITS = RowLimits()


@dataclass(frozen=True)
class GoldDocument:
    """One gold paper: a digest of each sentence's tokens (``sentence_digest``), the sentences' token bounds and
    the gold rows of each sentence, their offsets counted from the sentence's first token (``RowReader``)."""

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
class PublicDocument:
    """What participants are given of one document: its sentences (as the digests and token bounds that
    validation needs) and, where the task gives them (``scier-re``), the gold entities."""

    sentence_digests: list[int]
    bounds: list[Bounds]
    entities: list[list[Entity]] | None = None


@dataclass(frozen=True)
class SciERPublic:
    """The public view of a SciER gold: its documents, keyed by ``doc_id`` in file order."""

    documents: dict[str, PublicDocument]

    @classmethod
    @gc_paused()
    def of(cls, gold: SciERGold, *, with_entities: bool) -> SciERPublic:
        """The public view; ``with_entities`` when the task gives the gold entities as input."""
        return cls(
            {
                doc_id: PublicDocument(doc.sentence_digests, doc.bounds, doc.entities if with_entities else None)
                for doc_id, doc in gold.documents.items()
            }
        )


@dataclass(frozen=True)
class PredictedDocument:
    """One document's predictions, offsets counted from their sentence's first token as in ``GoldDocument``;
    ``entities`` is None where the task does not ask for them."""

    entities: list[list[Entity]] | None
    relations: list[list[Relation]]


#: Predictions keyed by ``doc_id``; every gold document has one.
SciERSubmission = dict[str, PredictedDocument]


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
def parse_gold(data: bytes, limits: RowLimits = DEFAULT_LIMITS) -> SciERGold:
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
    public: SciERPublic,
    *,
    with_entities: bool,
    symmetric: Set[str] = frozenset(),
    limits: RowLimits = DEFAULT_LIMITS,
) -> SciERSubmission:
    """Validate predictions against the public view; refuse with ``InvalidSubmission`` naming every problem.

    ``with_entities`` says whether ``predicted_ner`` is required and kept; when it is not, a
    ``predicted_ner`` that is present is still checked (a malformed file is a mistake worth
    reporting) but dropped.
    """
    problems = Problems(InvalidSubmission)
    reader = _SubmissionReader(public, problems, with_entities=with_entities, symmetric=symmetric, limits=limits)
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
        for doc_id in public.documents:
            if doc_id not in reader.first_line:
                problems.add(f"doc_id {show(doc_id)}", "has no line; every gold document needs one")
    problems.raise_if_any()
    return reader.documents


class _SubmissionReader:
    """Checks one submission line at a time, remembering which documents were seen where."""

    def __init__(
        self, public: SciERPublic, problems: Problems, *, with_entities: bool, symmetric: Set[str], limits: RowLimits
    ) -> None:
        self.public = public
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
        doc = self.public.documents.get(doc_id)
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


def _check_sentences(value: Any, doc: PublicDocument, where: str, problems: Problems) -> None:
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


def symmetric_labels(config: Mapping[str, Any]) -> frozenset[str]:
    """The ``symmetric_labels`` option as a set."""
    return frozenset(config.get("symmetric_labels", ()))
