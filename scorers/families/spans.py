"""Span and relation F1: micro counts of entity mentions and of relations between them.

The family behind end-to-end entity and relation extraction scores (PURE's ``evaluate_predictions``,
used by SciER and SciERC-style tasks). Per sentence, given gold and predicted rows:

- NER: a predicted entity ``(start, end, type)`` is correct when the sentence has a gold entity with
  the same start, end and type.
- Rel: a predicted relation ``(s1, e1, s2, e2, label)`` is correct when the sentence has a gold relation
  equal to it, arguments in that order; for a label named symmetric, the swapped order also counts.
- Rel+: Rel-correct, and each argument span is the span of some NER-correct predicted entity (of any
  type: the relation row carries no types).

Rows count as listed, gold and predicted alike, as in the official code: a gold row listed twice counts
twice towards recall, and a predicted row listed twice is counted correct twice, so callers refuse
repeated predictions (``relation_key`` says when two relation rows are the same relation). Counts are
kept as ``[correct, predicted, gold]`` triples, overall and per entity type and relation label, so
that any multiset of documents aggregates by summing them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

from scorers.base import prf

#: ``(start, end, type)``: token offsets, end inclusive.
Entity = tuple[int, int, str]
#: ``(start1, end1, start2, end2, label)``: subject span, object span, label.
Relation = tuple[int, int, int, int, str]
#: ``[correct, predicted, gold]``.
Triple = list[int]

CORRECT, PREDICTED, GOLD = 0, 1, 2


def relation_key(row: Relation, symmetric: Set[str] = frozenset()) -> Relation:
    """The relation as compared: for a symmetric label, the arguments in offset order."""
    if row[4] in symmetric and (row[2], row[3]) < (row[0], row[1]):
        return (row[2], row[3], row[0], row[1], row[4])
    return row


def _bump(table: dict[str, Triple], key: str, slot: int) -> None:
    counts = table.get(key)
    if counts is None:
        counts = table[key] = [0, 0, 0]
    counts[slot] += 1


@dataclass
class SpanCounts:
    """Correct / predicted / gold counts for NER, Rel and Rel+, overall and per type or label."""

    ner: Triple = field(default_factory=lambda: [0, 0, 0])
    rel: Triple = field(default_factory=lambda: [0, 0, 0])
    rel_plus: Triple = field(default_factory=lambda: [0, 0, 0])
    ner_by_type: dict[str, Triple] = field(default_factory=dict)
    rel_by_label: dict[str, Triple] = field(default_factory=dict)
    rel_plus_by_label: dict[str, Triple] = field(default_factory=dict)

    def add_sentence(
        self,
        gold_entities: Sequence[Entity],
        gold_relations: Sequence[Relation],
        predicted_entities: Sequence[Entity],
        predicted_relations: Sequence[Relation],
        symmetric: Set[str] = frozenset(),
    ) -> None:
        """Add one sentence's counts; offsets of gold and predictions must use the same origin."""
        self.ner[GOLD] += len(gold_entities)
        self.ner[PREDICTED] += len(predicted_entities)
        for entity in gold_entities:
            _bump(self.ner_by_type, entity[2], GOLD)
        gold_entity_set = set(gold_entities)
        correct_spans: set[tuple[int, int]] = set()
        for entity in predicted_entities:
            _bump(self.ner_by_type, entity[2], PREDICTED)
            if entity in gold_entity_set:
                self.ner[CORRECT] += 1
                _bump(self.ner_by_type, entity[2], CORRECT)
                correct_spans.add((entity[0], entity[1]))

        self.rel[GOLD] += len(gold_relations)
        self.rel[PREDICTED] += len(predicted_relations)
        self.rel_plus[GOLD] += len(gold_relations)
        self.rel_plus[PREDICTED] += len(predicted_relations)
        for relation in gold_relations:
            _bump(self.rel_by_label, relation[4], GOLD)
            _bump(self.rel_plus_by_label, relation[4], GOLD)
        gold_relation_set = {relation_key(r, symmetric) for r in gold_relations} if symmetric else set(gold_relations)
        for relation in predicted_relations:
            label = relation[4]
            _bump(self.rel_by_label, label, PREDICTED)
            _bump(self.rel_plus_by_label, label, PREDICTED)
            if relation_key(relation, symmetric) not in gold_relation_set:
                continue
            self.rel[CORRECT] += 1
            _bump(self.rel_by_label, label, CORRECT)
            if (relation[0], relation[1]) in correct_spans and (relation[2], relation[3]) in correct_spans:
                self.rel_plus[CORRECT] += 1
                _bump(self.rel_plus_by_label, label, CORRECT)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (lists and dicts), the form unit statistics are stored in."""
        return {
            "ner": list(self.ner),
            "rel": list(self.rel),
            "rel_plus": list(self.rel_plus),
            "ner_by_type": {k: list(v) for k, v in sorted(self.ner_by_type.items())},
            "rel_by_label": {k: list(v) for k, v in sorted(self.rel_by_label.items())},
            "rel_plus_by_label": {k: list(v) for k, v in sorted(self.rel_plus_by_label.items())},
        }


def sum_triples(triples: Iterable[Sequence[int]]) -> Triple:
    """Element-wise sum of ``[correct, predicted, gold]`` triples."""
    total = [0, 0, 0]
    for triple in triples:
        total[0] += triple[0]
        total[1] += triple[1]
        total[2] += triple[2]
    return total


def sum_tables(tables: Iterable[Mapping[str, Sequence[int]]]) -> dict[str, Triple]:
    """Per-key sum of ``{key: triple}`` tables (per type or per label), keys sorted."""
    total: dict[str, Triple] = {}
    for table in tables:
        for key, triple in table.items():
            counts = total.setdefault(key, [0, 0, 0])
            counts[0] += triple[0]
            counts[1] += triple[1]
            counts[2] += triple[2]
    return dict(sorted(total.items()))


def prf_metrics(prefix: str, triple: Sequence[int]) -> dict[str, float]:
    """``{prefix_p, prefix_r, prefix_f1}`` from a ``[correct, predicted, gold]`` triple."""
    p, r, f = prf(triple[CORRECT], triple[PREDICTED], triple[GOLD])
    return {f"{prefix}_p": p, f"{prefix}_r": r, f"{prefix}_f1": f}
