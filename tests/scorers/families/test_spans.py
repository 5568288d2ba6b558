"""The span and relation F1 family: hand-computed counts, symmetric labels, repeats, aggregation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers.families.spans import (
    Entity,
    Relation,
    SpanCounts,
    prf_metrics,
    relation_key,
    sum_tables,
    sum_triples,
)

M, T, D = "Method", "Task", "Dataset"

# One sentence: three gold entities and two gold relations.
GOLD_ENTITIES: list[Entity] = [(0, 1, M), (3, 3, T), (5, 6, D)]
GOLD_RELATIONS: list[Relation] = [(0, 1, 3, 3, "Used-For"), (5, 6, 0, 1, "Part-Of")]


def counts_of(
    gold_entities: list[Entity],
    gold_relations: list[Relation],
    predicted_entities: list[Entity],
    predicted_relations: list[Relation],
    symmetric: frozenset[str] = frozenset(),
) -> SpanCounts:
    counts = SpanCounts()
    counts.add_sentence(gold_entities, gold_relations, predicted_entities, predicted_relations, symmetric)
    return counts


def test_hand_computed_sentence() -> None:
    predicted_entities: list[Entity] = [
        (0, 1, M),  # correct
        (3, 3, M),  # right span, wrong type (gold says Task)
        (5, 6, D),  # correct
        (8, 8, T),  # spurious
    ]
    predicted_relations: list[Relation] = [
        (0, 1, 3, 3, "Used-For"),  # Rel-correct; (3, 3) is not NER-correct, so not Rel+
        (5, 6, 0, 1, "Part-Of"),  # Rel- and Rel+-correct
        (0, 1, 5, 6, "Compare-With"),  # wrong
    ]
    counts = counts_of(GOLD_ENTITIES, GOLD_RELATIONS, predicted_entities, predicted_relations)
    assert counts.ner == [2, 4, 3]
    assert counts.rel == [2, 3, 2]
    assert counts.rel_plus == [1, 3, 2]
    assert counts.ner_by_type == {M: [1, 2, 1], T: [0, 1, 1], D: [1, 1, 1]}
    assert counts.rel_by_label == {"Used-For": [1, 1, 1], "Part-Of": [1, 1, 1], "Compare-With": [0, 1, 0]}
    assert counts.rel_plus_by_label == {"Used-For": [0, 1, 1], "Part-Of": [1, 1, 1], "Compare-With": [0, 1, 0]}

    ner = prf_metrics("ner", counts.ner)
    # P = 2/4, R = 2/3, F1 = 2 * 1/2 * 2/3 / (1/2 + 2/3) = (2/3) / (7/6) = 4/7
    assert ner == pytest.approx({"ner_p": 0.5, "ner_r": 2 / 3, "ner_f1": 4 / 7}, abs=1e-15)
    # Rel: P = 2/3, R = 2/2, F1 = 2 * 2/3 / (5/3) = 4/5; Rel+: P = 1/3, R = 1/2, F1 = (1/3) / (5/6) = 2/5
    assert prf_metrics("rel", counts.rel) == pytest.approx({"rel_p": 2 / 3, "rel_r": 1.0, "rel_f1": 0.8})
    assert prf_metrics("x", counts.rel_plus) == pytest.approx({"x_p": 1 / 3, "x_r": 0.5, "x_f1": 0.4})


def test_rel_plus_needs_each_argument_to_be_a_correct_predicted_entity() -> None:
    relation: list[Relation] = [(0, 1, 3, 3, "Used-For")]
    # No predicted entities at all: Rel-correct, never Rel+-correct.
    assert counts_of(GOLD_ENTITIES, relation, [], relation).rel_plus == [0, 1, 1]
    # Only the subject predicted correctly.
    assert counts_of(GOLD_ENTITIES, relation, [(0, 1, M)], relation).rel_plus == [0, 1, 1]
    # Both arguments correct.
    assert counts_of(GOLD_ENTITIES, relation, [(0, 1, M), (3, 3, T)], relation).rel_plus == [1, 1, 1]


def test_a_span_predicted_with_two_types_is_two_rows_and_one_correct_span_suffices() -> None:
    relation: list[Relation] = [(0, 1, 3, 3, "Used-For")]
    predicted: list[Entity] = [(0, 1, M), (0, 1, T), (3, 3, T)]
    counts = counts_of(GOLD_ENTITIES, relation, predicted, relation)
    assert counts.ner == [2, 3, 3]  # (0, 1, Task) is a wrong extra row
    assert counts.rel_plus == [1, 1, 1]  # the relation carries no types: the Method row makes (0, 1) correct


def test_relation_order_matters_unless_the_label_is_symmetric() -> None:
    gold: list[Relation] = [(0, 1, 5, 6, "Synonym-Of"), (0, 1, 3, 3, "Used-For")]
    swapped: list[Relation] = [(5, 6, 0, 1, "Synonym-Of"), (3, 3, 0, 1, "Used-For")]
    entities = GOLD_ENTITIES
    assert counts_of(entities, gold, entities, swapped).rel == [0, 2, 2]
    symmetric = frozenset({"Synonym-Of"})
    with_option = counts_of(entities, gold, entities, swapped, symmetric)
    assert with_option.rel == [1, 2, 2]  # Synonym-Of matches swapped; Used-For still does not
    assert with_option.rel_plus == [1, 2, 2]
    assert with_option.rel_by_label == {"Synonym-Of": [1, 1, 1], "Used-For": [0, 1, 1]}
    # Gold listed in the other order matches too: both sides are compared in one canonical order.
    assert counts_of(entities, swapped, entities, gold, symmetric).rel == [1, 2, 2]


def test_relation_key() -> None:
    assert relation_key((5, 6, 0, 1, "Synonym-Of")) == (5, 6, 0, 1, "Synonym-Of")
    assert relation_key((5, 6, 0, 1, "Synonym-Of"), {"Synonym-Of"}) == (0, 1, 5, 6, "Synonym-Of")
    assert relation_key((0, 1, 5, 6, "Synonym-Of"), {"Synonym-Of"}) == (0, 1, 5, 6, "Synonym-Of")
    assert relation_key((5, 6, 0, 1, "Used-For"), {"Synonym-Of"}) == (5, 6, 0, 1, "Used-For")


def test_gold_rows_count_as_listed() -> None:
    gold_entities: list[Entity] = [(0, 1, M), (0, 1, M)]
    gold_relations: list[Relation] = [(0, 1, 3, 3, "Used-For"), (0, 1, 3, 3, "Used-For")]
    counts = counts_of(gold_entities, gold_relations, [(0, 1, M)], [(0, 1, 3, 3, "Used-For")])
    # One prediction matches, but gold holds two rows: recall 1/2 for both.
    assert counts.ner == [1, 1, 2]
    assert counts.rel == [1, 1, 2]
    assert prf_metrics("rel", counts.rel)["rel_r"] == 0.5


def test_predicted_rows_count_as_listed_as_in_the_official_code() -> None:
    # Why scorers refuse repeated predictions: the family, like the official code, counts each copy.
    counts = counts_of(GOLD_ENTITIES, [], [(0, 1, M), (0, 1, M)], [])
    assert counts.ner == [2, 2, 3]


def test_zero_denominators_give_zero() -> None:
    counts = counts_of([], [], [], [])
    assert prf_metrics("ner", counts.ner) == {"ner_p": 0.0, "ner_r": 0.0, "ner_f1": 0.0}
    assert prf_metrics("ner", [0, 3, 0]) == {"ner_p": 0.0, "ner_r": 0.0, "ner_f1": 0.0}


def test_counts_add_up_over_sentences_and_documents() -> None:
    counts = SpanCounts()
    counts.add_sentence(GOLD_ENTITIES, GOLD_RELATIONS, GOLD_ENTITIES, GOLD_RELATIONS)
    counts.add_sentence([(10, 10, T)], [], [(10, 10, D)], [])
    assert counts.ner == [3, 4, 4]
    assert counts.ner_by_type == {M: [1, 1, 1], T: [1, 1, 2], D: [1, 2, 1]}
    stored = counts.to_json()
    assert sum_triples([stored["ner"], stored["ner"], [1, 0, 0]]) == [7, 8, 8]
    assert sum_tables([stored["ner_by_type"], {"Task": [1, 1, 1], "Other": [0, 1, 0]}]) == {
        D: [1, 2, 1],
        M: [1, 1, 1],
        "Other": [0, 1, 0],
        T: [2, 2, 3],
    }
    assert list(sum_tables([stored["ner_by_type"]])) == sorted(stored["ner_by_type"])


def test_to_json_is_plain_data_and_a_copy() -> None:
    counts = counts_of(GOLD_ENTITIES, GOLD_RELATIONS, GOLD_ENTITIES, GOLD_RELATIONS)
    stored = counts.to_json()
    assert stored == {
        "ner": [3, 3, 3],
        "rel": [2, 2, 2],
        "rel_plus": [2, 2, 2],
        "ner_by_type": {D: [1, 1, 1], M: [1, 1, 1], T: [1, 1, 1]},
        "rel_by_label": {"Part-Of": [1, 1, 1], "Used-For": [1, 1, 1]},
        "rel_plus_by_label": {"Part-Of": [1, 1, 1], "Used-For": [1, 1, 1]},
    }
    stored["ner"][0] = 99
    assert counts.ner == [3, 3, 3]


spans = st.tuples(st.integers(0, 6), st.integers(0, 3)).map(lambda p: (p[0], p[0] + p[1]))
entities = st.lists(st.builds(lambda s, t: (s[0], s[1], t), spans, st.sampled_from([M, T, D])), max_size=8)
relations = st.lists(
    st.builds(lambda a, b, label: (a[0], a[1], b[0], b[1], label), spans, spans, st.sampled_from(["A", "B", "C"])),
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(
    gold_entities=entities,
    gold_relations=relations,
    predicted_entities=entities,
    predicted_relations=relations,
    symmetric=st.sets(st.sampled_from(["A", "B"])),
    data=st.data(),
)
def test_counts_do_not_depend_on_row_order(
    gold_entities: list[Entity],
    gold_relations: list[Relation],
    predicted_entities: list[Entity],
    predicted_relations: list[Relation],
    symmetric: set[str],
    data: st.DataObject,
) -> None:
    frozen = frozenset(symmetric)
    first = counts_of(gold_entities, gold_relations, predicted_entities, predicted_relations, frozen)
    shuffled = counts_of(
        data.draw(st.permutations(gold_entities)),
        data.draw(st.permutations(gold_relations)),
        data.draw(st.permutations(predicted_entities)),
        data.draw(st.permutations(predicted_relations)),
        frozen,
    )
    assert shuffled.to_json() == first.to_json()
    # Invariants: correct never exceeds predicted, Rel+ never exceeds Rel, per-label tables sum to totals.
    assert first.rel_plus[0] <= first.rel[0] <= first.rel[1]
    assert sum_triples(first.rel_by_label.values()) == first.rel
    assert sum_triples(first.ner_by_type.values()) == first.ner
