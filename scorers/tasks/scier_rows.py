"""SciER's rows: the per-sentence lists of entity rows ``[start, end, type]`` and relation rows
``[start1, end1, start2, end2, label]``, as the gold (``ner``, ``relations``) and the predictions
(``predicted_ner``, ``predicted_relations``) hold them, within the size limits of ``RowLimits``.

``RowReader`` checks and reads them for ``scorers.tasks.scier_format``; it sees only the rows and each
sentence's token bounds, so a submission's rows are judged on what participants are given.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Set
from dataclasses import dataclass
from typing import Any

from scorers.errors import Problems
from scorers.families.spans import Entity, Relation, relation_key
from scorers.tasks.limits import SizeLimits, bound

#: ``(first, last)`` token offset of a sentence; ``last < first`` for a sentence without tokens.
Bounds = tuple[int, int]

ENTITY_FIELDS = ("start", "end", "type")
RELATION_FIELDS = ("start1", "end1", "start2", "end2", "label")


@dataclass(frozen=True)
class RowLimits(SizeLimits):
    """Size limits of a file's rows, for gold and predictions alike. The release holds at most 36 entity and 27
    relation rows in a sentence, labels of 14 characters, 3 entity types and 9 relation labels."""

    entities_per_sentence: int = bound(1_000, "entity rows accepted in one sentence")
    relations_per_sentence: int = bound(1_000, "relation rows accepted in one sentence")
    label_chars: int = bound(200, "characters accepted in one entity type or relation label")
    labels: int = bound(100, "distinct entity types, and distinct relation labels, accepted in one file")


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

    The rows are kept as small as scoring allows, since a gold file's rows stay in memory while its bytes
    are still held: offsets relative to the first token of their sentence (rows are only ever compared
    within one sentence, gold and predictions alike, so the origin does not change a count, and offsets
    below 257 are the interpreter's shared small integers instead of a new object each), and each type
    or label one shared string per file (the JSON decoder makes a new string for every row).
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
        #: The distinct types and labels read, each mapped to itself: the one string the rows share.
        self.types: dict[str, str] = {}
        self.labels: dict[str, str] = {}

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

    def _sentence_rows(
        self, value: list[Any], key: str, where: str, limit: str, what: str
    ) -> Iterator[tuple[int, list[Any]]]:
        """Each sentence's index and rows; rows that are not a list, or too many, are reported and read as none."""
        for k, rows in enumerate(value):
            if not isinstance(rows, list):
                self.problems.add(f"{where}, {key}[{k}]", f"expected a list of rows, found {kind(rows)}")
                yield k, []
            elif self._too_many(rows, limit, what, f"{where}, {key}[{k}]"):
                yield k, []
            else:
                yield k, rows

    def entities(self, value: Any, key: str, bounds: list[Bounds], where: str) -> list[list[Entity]] | None:
        if not self._sentence_lists(value, key, bounds, where):
            return None
        out: list[list[Entity]] = []
        max_chars, types = self.limits.label_chars, self.types
        for k, rows in self._sentence_rows(value, key, where, "entities_per_sentence", "entity rows"):
            first, last = bounds[k]
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
                        entity = (s - first, e - first, types.setdefault(t, t))
                        if self.refuse_repeats and self._repeat(seen, entity, i, row, where, f"{key}[{k}]"):
                            continue
                        parsed.append(entity)
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
        for k, rows in self._sentence_rows(value, key, where, "relations_per_sentence", "relation rows"):
            first, last = bounds[k]
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
                        relation = (s1 - first, e1 - first, s2 - first, e2 - first, labels.setdefault(label, label))
                        # With a symmetric label, [a, b] and [b, a] are one relation: listing both
                        # would be counted correct twice, so it is a repeat.
                        identity = relation_key(relation, symmetric)
                        if self.refuse_repeats and self._repeat(seen, identity, i, row, where, f"{key}[{k}]"):
                            continue
                        parsed.append(relation)
                        continue
                self.problems.add(
                    f"{where}, {key}[{k}][{i}]", _row_problem(row, RELATION_FIELDS, bounds[k], k, self.limits)
                )
            out.append(parsed)
        return out
