"""SciER baseline: a gazetteer for entities and a type-pair rule for relations, both learned from training.

Entities (``scier-ere``): every mention string of the training data maps to the type it carries
most often. A sentence is tagged from left to right with the longest known token sequence that
starts at each position; tagged spans never overlap. Offsets are written at document level.

Relations (both scorers): the entities of a sentence are put in text order, and every ordered pair
(subject, object) is described by its two types, whether the subject comes first and whether the
two are neighbours in that order. In training, each description's most frequent outcome,
"no relation" included, is counted; a description whose most frequent outcome is a label predicts
that label. This refines "the most frequent label for each pair of entity types" so that the
baseline does not link every pair: in SciER only neighbouring Method/Task, Method/Dataset and
Dataset/Task pairs are usually related. ``scier-re`` applies the rule to the given gold entities.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator

from baselines.base import Baseline, BaselineInputs, RunContext
from baselines.io import dump_json_lines
from baselines.registry import register
from baselines.tasks.scier import Document, Relation, Span, TrainingSentence, read_documents, read_training

#: (subject type, object type, subject comes first, neighbours) of an ordered entity pair.
PairKey = tuple[str, str, bool, bool]
NO_RELATION = ""


def _most_frequent(counts: Counter[str]) -> str:
    # Ties go to the outcome that sorts first, and "no relation" sorts first: when in doubt, abstain.
    return min(counts.items(), key=lambda item: (-item[1], item[0]))[0]


class Gazetteer:
    """Mention token sequences and their most frequent type; longest-match tagging without overlaps."""

    def __init__(self, sentences: Iterable[TrainingSentence]) -> None:
        counts: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
        for sentence in sentences:
            for text, kind in sentence.mentions:
                words = tuple(text.split())
                if words:
                    counts[words][kind] += 1
        self.types = {words: _most_frequent(kinds) for words, kinds in counts.items()}
        self.longest = max((len(words) for words in self.types), default=0)

    def tag(self, tokens: list[str]) -> list[Span]:
        spans, start = [], 0
        while start < len(tokens):
            for width in range(min(self.longest, len(tokens) - start), 0, -1):
                kind = self.types.get(tuple(tokens[start : start + width]))
                if kind is not None:
                    spans.append((start, start + width - 1, kind))
                    start += width
                    break
            else:
                start += 1
        return spans


def _ordered_pairs(entities: Iterable[Span]) -> Iterator[tuple[Span, Span, PairKey]]:
    ordered = sorted(set(entities))
    for i, subject in enumerate(ordered):
        for j, obj in enumerate(ordered):
            if i != j:
                yield subject, obj, (subject[2], obj[2], i < j, abs(i - j) == 1)


class PairRule:
    """The most frequent outcome of each entity-pair description in training, kept where it is a label."""

    def __init__(self, sentences: Iterable[TrainingSentence]) -> None:
        outcomes: dict[PairKey, Counter[str]] = defaultdict(Counter)
        for sentence in sentences:
            labels: dict[tuple[int, int, int, int], str] = {}
            for s1, e1, s2, e2, label in sentence.relations:
                labels.setdefault((s1, e1, s2, e2), label)
            for subject, obj, key in _ordered_pairs(sentence.entities):
                outcomes[key][labels.get((subject[0], subject[1], obj[0], obj[1]), NO_RELATION)] += 1
        chosen = {key: _most_frequent(counts) for key, counts in outcomes.items()}
        self.labels = {key: label for key, label in sorted(chosen.items()) if label != NO_RELATION}

    def relations(self, entities: Iterable[Span]) -> list[Relation]:
        rows: dict[Relation, None] = {}  # an ordered set: one row per pair, however many types a span has
        for subject, obj, key in _ordered_pairs(entities):
            label = self.labels.get(key)
            if label is not None:
                rows[(subject[0], subject[1], obj[0], obj[1], label)] = None
        return list(rows)


@register
class SciERGazetteer(Baseline):
    name = "scier-gazetteer"
    version = "1"
    title = "Gazetteer + type-pair relations"
    description = (
        "Entities: the longest training mention strings found in each sentence, with their most frequent "
        "training type. Relations: the most frequent training outcome for the pair's types, order and adjacency."
    )
    scorers = ("scier-ere", "scier-re")

    def produce(self, inputs: BaselineInputs, context: RunContext) -> bytes:
        training = read_training(inputs.training)
        given_entities = inputs.scorer == "scier-re"
        documents = read_documents(inputs.inputs, with_entities=given_entities)
        context.start(sum(len(d.sentences) for d in documents))
        gazetteer = Gazetteer(training)
        rule = PairRule(training)
        context.log(
            f"learned {len(gazetteer.types)} mention strings and {len(rule.labels)} relation rules "
            f"from {len(training)} training sentences"
        )
        lines = []
        for document in documents:
            lines.append(self._predict(document, gazetteer, rule, given_entities))
            context.advance(len(document.sentences))
        return dump_json_lines(lines)

    @staticmethod
    def _predict(document: Document, gazetteer: Gazetteer, rule: PairRule, given_entities: bool) -> dict[str, object]:
        entities: list[list[Span]] = []
        for k, tokens in enumerate(document.sentences):
            if document.entities is not None:
                entities.append(sorted(set(document.entities[k])))
            else:
                offset = document.offsets[k]
                entities.append([(start + offset, end + offset, kind) for start, end, kind in gazetteer.tag(tokens)])
        relations = [[list(row) for row in rule.relations(spans)] for spans in entities]
        if given_entities:
            return {"doc_id": document.doc_id, "predicted_relations": relations}
        ner = [[list(span) for span in spans] for spans in entities]
        return {"doc_id": document.doc_id, "predicted_ner": ner, "predicted_relations": relations}
