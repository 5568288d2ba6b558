"""SciER (Zhang et al., EMNLP 2024): entity and relation extraction from scientific papers.

Definition: the official ``evaluate_predictions`` of SciER's ``data_structures.py`` (the PURE scorer),
micro counts over all sentences of all documents (``scorers.families.spans``):

- NER: a predicted entity is correct when its sentence has a gold entity with the same start, end
  and type.
- Rel: a predicted relation is correct when its sentence has a gold relation with the same
  ``(s1, e1, s2, e2, label)``, in that order. Labels named in the option ``symmetric_labels`` also
  match swapped (none by default, as in the official code).
- Rel+: Rel-correct, and both argument spans are spans of NER-correct predicted entities.
- P = correct / predicted, R = correct / gold, F1 = 2PR / (P + R); a zero denominator gives 0.
  Gold rows count as listed: a gold row repeated in the release counts twice towards recall (and
  a gold relation listed in both orders under a symmetric label counts twice, matched at most once).

``scier-ere`` (end to end) reports all nine numbers, primary ``rel_plus_f1``. ``scier-re`` (relations
given the gold entities) reports the Rel counts as ``re_p``, ``re_r``, ``re_f1``, primary ``re_f1``;
with the gold entities standing in for ``predicted_ner`` every Rel-correct relation whose arguments are
gold entities is also Rel+-correct, which is every one in the release.

Breakdowns, recomputed from summed counts: ``relation_label`` (Rel, and for ``scier-ere`` Rel+, per
label found in the gold or the predictions), ``entity_type`` (NER per type, ``scier-ere`` only) and
``document`` (every metric per document, the unit of the statistics).

Formats: gold is the span ("PLM") JSON Lines release (``doc_id``, ``sentences``, ``ner``, ``relations``;
document-level token offsets, end inclusive). A submission is JSON Lines, one object per gold document
with ``doc_id``, ``predicted_ner`` (``scier-ere`` only) and ``predicted_relations``, one list of rows per
gold sentence; other keys are ignored, except ``sentences``, which must equal the gold's when present.
In ``scier-re`` a ``predicted_ner`` is checked like any other rows, then ignored.

Submissions are validated against the public view (``SciERPublic``): the documents' ids and sentences,
and for ``scier-re`` the gold entities it gives as input; never the gold relations or, for ``scier-ere``,
the gold entities. Refused (``InvalidSubmission``, every problem with its line, document and row): a line that is not a
JSON object; a missing, non-string, unknown or repeated ``doc_id``; a gold document without a line; a
missing ``predicted_ner`` / ``predicted_relations``; a sentence count that differs from the gold; a row
that is not ``[start, end, type]`` / ``[start1, end1, start2, end2, label]`` with integer offsets (not
booleans, strings or floats) and a string type or label; a span outside its sentence or with
start > end; a row repeated within a sentence (with a symmetric label, ``[a, b]`` and ``[b, a]`` are the
same relation); a file beyond a size limit (below). A gold file with such rows (repeats aside), repeated
doc_ids or ``ner`` / ``relations`` lists that do not match its sentences is refused as ``InvalidGold``.

Size limits (``scorers.tasks.limits``), for gold (when it is loaded) and submissions (each measured on
the file alone) alike: ``max_entities_per_sentence`` and
``max_relations_per_sentence`` (1,000 rows each), ``max_label_chars`` (200 characters in a type or label)
and ``max_labels`` (100 distinct entity types, and 100 distinct relation labels, in one file). The release
holds at most 36 entity and 27 relation rows in a sentence, 3 entity types and 9 relation labels of at most
14 characters. Scoring is linear in the rows (set look-ups per sentence), so the row limits bound the size
of one sentence's lists; the label limits matter more, because every type and label a file uses becomes a
row of the stored breakdown tables and of the per-document statistics.

Deliberate differences from the official code, all on input it mishandles: documents are paired by
``doc_id`` (the official reader pairs lines by position and silently drops what does not line up);
spans outside their sentence, start > end and repeated predicted rows are refused (the official code
scores the first two as wrong and counts a repeat as a second correct answer); a wrong sentence count is
a message rather than an ``AssertionError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from scorers.base import Breakdown, MetricSpec, OptionSpec, Scorer, UnitStats
from scorers.errors import OptionsError
from scorers.families import weighted
from scorers.families.spans import SpanCounts, prf_metrics, sum_tables, sum_triples
from scorers.families.weighted import WeightedMetric
from scorers.io import json_lines_bytes
from scorers.registry import register
from scorers.tasks import scier_format
from scorers.tasks.limits import check_limit
from scorers.tasks.scier_format import SciERGold, SciERPublic, SciERSubmission
from scorers.tasks.scier_rows import RowLimits


def _prf_specs(prefix: str, what: str) -> tuple[MetricSpec, ...]:
    return (
        MetricSpec(f"{prefix}_p", f"{what} precision: correct / predicted"),
        MetricSpec(f"{prefix}_r", f"{what} recall: correct / gold"),
        MetricSpec(f"{prefix}_f1", f"{what} F1: harmonic mean of precision and recall"),
    )


class _SciERScorer(Scorer[SciERGold, SciERPublic, SciERSubmission]):
    """What both SciER scorers share: the gold format, the option and the submission checks."""

    version = "1.0"
    options = (
        OptionSpec(
            "symmetric_labels",
            [],
            "relation labels whose arguments may be given in either order (none for SciER, as officially)",
        ),
        *RowLimits.options(),
    )
    gold_format = (
        'SciER span ("PLM") JSON Lines: one object per document with doc_id, sentences (token lists), '
        "ner (per sentence [start, end, type]) and relations (per sentence [start1, end1, start2, end2, label]); "
        "document-level token offsets, end inclusive"
    )
    submission_filename = "submission.jsonl"
    unit = "document"
    #: Whether the submission's ``predicted_ner`` is required and scored.
    with_entities: ClassVar[bool]

    @classmethod
    def check_option(cls, name: str, value: Any) -> Any:
        checked = check_limit(cls.name, name, super().check_option(name, value))
        if name == "symmetric_labels" and not all(isinstance(label, str) for label in checked):
            raise OptionsError(f"option 'symmetric_labels' of {cls.name} must be a list of label strings")
        return checked

    def parse_gold(self, data: bytes) -> SciERGold:
        return scier_format.parse_gold(data, RowLimits.from_config(self.config))

    def public_view(self, gold: SciERGold) -> SciERPublic:
        # scier-re gives the gold entities as the task's input; scier-ere asks for them.
        return SciERPublic.of(gold, with_entities=not self.with_entities)

    def parse_submission(self, data: bytes, public: SciERPublic) -> SciERSubmission:
        return scier_format.parse_submission(
            data,
            public,
            with_entities=self.with_entities,
            symmetric=scier_format.symmetric_labels(self.config),
            limits=RowLimits.from_config(self.config),
        )

    def sample_submission(self, public: SciERPublic) -> bytes:
        """A line per document predicting nothing: an empty list per sentence."""
        keys = ("predicted_ner", "predicted_relations") if self.with_entities else ("predicted_relations",)
        return json_lines_bytes(
            {"doc_id": doc_id, **{key: [[] for _ in doc.bounds] for key in keys}}
            for doc_id, doc in public.documents.items()
        )

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> WeightedMetric:
        # Every metric is {counts}_{p,r,f1} of the [correct, predicted, gold] triple stored as {counts}.
        counts, _, part = metric.rpartition("_")
        return weighted.prf(part, *weighted.triples(stats, counts))

    def _counts(self, gold: SciERGold, submission: SciERSubmission) -> dict[str, SpanCounts]:
        """Per-document counts; without predicted entities, the gold ones stand in."""
        symmetric = scier_format.symmetric_labels(self.config)
        out: dict[str, SpanCounts] = {}
        for doc_id, doc in gold.documents.items():
            predicted = submission[doc_id]
            entities = predicted.entities if predicted.entities is not None else doc.entities
            counts = SpanCounts()
            for k in range(len(doc.bounds)):
                counts.add_sentence(
                    doc.entities[k], doc.relations[k], entities[k], predicted.relations[k], symmetric=symmetric
                )
            out[doc_id] = counts
        return out


@register
class SciEREndToEnd(_SciERScorer):
    """``scier-ere``: entities and relations predicted from the text (NER, Rel, Rel+)."""

    name = "scier-ere"
    title = "SciER end-to-end entity and relation extraction"
    description = (
        "Micro precision, recall and F1 over all sentences for entities (NER), relations with exact "
        "argument boundaries and label (Rel), and relations whose arguments are also correctly typed "
        "predicted entities (Rel+), as SciER's official PURE scorer computes them."
    )
    primary_metric = "rel_plus_f1"
    secondary_metrics = ("rel_f1", "ner_f1")
    metrics = (
        *_prf_specs("ner", "Entity"),
        *_prf_specs("rel", "Relation (boundaries and label)"),
        *_prf_specs("rel_plus", "Strict relation (Rel-correct, arguments NER-correct)"),
    )
    submission_format = (
        "JSON Lines: one object per gold document with doc_id, predicted_ner (per sentence [start, end, type]) "
        "and predicted_relations (per sentence [start1, end1, start2, end2, label]), one list per gold sentence, "
        "document-level token offsets as in the gold"
    )
    leaderboard_breakdowns = ("relation_label", "entity_type")
    with_entities = True

    def unit_stats(self, gold: SciERGold, submission: SciERSubmission) -> dict[str, UnitStats]:
        return {doc_id: counts.to_json() for doc_id, counts in self._counts(gold, submission).items()}

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return {
            **prf_metrics("ner", sum_triples(s["ner"] for s in stats)),
            **prf_metrics("rel", sum_triples(s["rel"] for s in stats)),
            **prf_metrics("rel_plus", sum_triples(s["rel_plus"] for s in stats)),
        }

    def breakdown(self, gold: SciERGold, submission: SciERSubmission, stats: Mapping[str, UnitStats]) -> Breakdown:
        units = list(stats.values())
        rel = sum_tables(s["rel_by_label"] for s in units)
        rel_plus = sum_tables(s["rel_plus_by_label"] for s in units)
        ner = sum_tables(s["ner_by_type"] for s in units)
        return {
            "relation_label": {
                label: {**prf_metrics("rel", rel[label]), **prf_metrics("rel_plus", rel_plus[label])} for label in rel
            },
            "entity_type": {entity_type: prf_metrics("ner", triple) for entity_type, triple in ner.items()},
            **super().breakdown(gold, submission, stats),
        }


@register
class SciERRelations(_SciERScorer):
    """``scier-re``: relations predicted given the gold entities (RE)."""

    name = "scier-re"
    title = "SciER relation extraction given the gold entities"
    description = (
        "Micro precision, recall and F1 over all sentences for relations with exact argument boundaries "
        "and label, the gold entities being given, as SciER's official PURE scorer computes them."
    )
    primary_metric = "re_f1"
    secondary_metrics = ("re_p",)
    metrics = _prf_specs("re", "Relation (boundaries and label)")
    submission_format = (
        "JSON Lines: one object per gold document with doc_id and predicted_relations "
        "(per sentence [start1, end1, start2, end2, label]), one list per gold sentence, "
        "document-level token offsets as in the gold"
    )
    leaderboard_breakdowns = ("relation_label",)
    with_entities = False

    def unit_stats(self, gold: SciERGold, submission: SciERSubmission) -> dict[str, UnitStats]:
        return {
            doc_id: {"re": list(counts.rel), "re_by_label": dict(sorted(counts.rel_by_label.items()))}
            for doc_id, counts in self._counts(gold, submission).items()
        }

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return prf_metrics("re", sum_triples(s["re"] for s in stats))

    def breakdown(self, gold: SciERGold, submission: SciERSubmission, stats: Mapping[str, UnitStats]) -> Breakdown:
        by_label = sum_tables(s["re_by_label"] for s in stats.values())
        return {
            "relation_label": {label: prf_metrics("re", triple) for label, triple in by_label.items()},
            **super().breakdown(gold, submission, stats),
        }
