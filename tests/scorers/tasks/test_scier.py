"""The SciER scorers: hand-computed scores, options, breakdowns, order independence and subsets."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from scorers import InvalidGold, InvalidSubmission, OptionsError, get_scorer
from scorers.base import ScoreReport
from tests.conftest import require_shared
from tests.scorers.tasks.scier_data import GOLD_DOCS, gold_bytes, jsonl, perfect_lines, predicted_lines


def score(
    name: str, submission: list[Any], options: dict[str, Any] | None = None, gold: bytes | None = None
) -> ScoreReport:
    return get_scorer(name, options).score(gold if gold is not None else gold_bytes(), jsonl(submission))


# The hand-checked predictions of scier_data, counted by hand:
# A, sentence 0: (2,2,Method) correct, (4,4,Task) wrong type          NER 1/2 predicted, 2 gold
#    sentence 1: (6,6,Method) correct, (8,9,Method) spurious           NER 1/2 predicted, 1 gold
#    relation (2,2,4,4,Used-For) = gold: Rel-correct; (4,4) is not NER-correct, so not Rel+
# B: both entities correct (NER 2/2/2); relation (2,2,0,0,Synonym-Of) is the gold one reversed: wrong
# Totals: NER c=4 p=6 g=5, Rel c=1 p=2 g=2, Rel+ c=0 p=2 g=2.
def test_ere_hand_computed() -> None:
    report = score("scier-ere", predicted_lines())
    assert report.metrics == pytest.approx(
        {
            "ner_p": 4 / 6,
            "ner_r": 4 / 5,
            "ner_f1": 8 / 11,  # 2 * 2/3 * 4/5 / (2/3 + 4/5) = (16/15) / (22/15)
            "rel_p": 1 / 2,
            "rel_r": 1 / 2,
            "rel_f1": 1 / 2,
            "rel_plus_p": 0.0,
            "rel_plus_r": 0.0,
            "rel_plus_f1": 0.0,
        },
        abs=1e-12,
    )
    assert list(report.metrics) == [m.name for m in get_scorer("scier-ere").metrics]


def test_ere_symmetric_label_option() -> None:
    # With Synonym-Of symmetric, B's reversed relation is correct and both its arguments are
    # NER-correct: Rel c=2 p=2 g=2, Rel+ c=1 p=2 g=2.
    report = score("scier-ere", predicted_lines(), {"symmetric_labels": ["Synonym-Of"]})
    assert report.metrics["rel_f1"] == 1.0
    assert report.metrics["rel_plus_p"] == report.metrics["rel_plus_r"] == 0.5
    assert report.metrics["ner_f1"] == pytest.approx(8 / 11)


def test_re_hand_computed_and_symmetric_option() -> None:
    lines = predicted_lines(entities=False)
    # Rel c=1 p=2 g=2 as above; the gold entities stand in, so there are no NER numbers.
    assert score("scier-re", lines).metrics == pytest.approx({"re_p": 0.5, "re_r": 0.5, "re_f1": 0.5})
    assert score("scier-re", lines, {"symmetric_labels": ["Synonym-Of"]}).metrics == {
        "re_p": 1.0,
        "re_r": 1.0,
        "re_f1": 1.0,
    }


def test_re_ignores_predicted_ner() -> None:
    without = score("scier-re", predicted_lines(entities=False))
    with_entities = score("scier-re", predicted_lines())  # wrong entities in A: ignored
    assert with_entities.metrics == without.metrics
    assert with_entities.units == without.units


def test_rel_and_rel_plus_differ_when_entities_are_missing() -> None:
    lines = perfect_lines()
    lines[0]["predicted_ner"] = [[], []]  # A's relation keeps its boundaries, loses its entities
    report = score("scier-ere", lines)
    # Rel 2/2/2; Rel+ only B's relation: 1/2/2. NER: only B's two entities, c=2 p=2 g=3+2=5.
    assert report.metrics["rel_f1"] == 1.0
    assert report.metrics["rel_plus_p"] == report.metrics["rel_plus_r"] == 0.5
    assert report.metrics["ner_p"] == 1.0
    assert report.metrics["ner_r"] == pytest.approx(2 / 5)


def test_perfect_submissions_score_one() -> None:
    assert set(score("scier-ere", perfect_lines()).metrics.values()) == {1.0}
    assert set(score("scier-re", perfect_lines(entities=False)).metrics.values()) == {1.0}


def test_repeated_gold_rows_count_as_listed() -> None:
    docs = json.loads(json.dumps(GOLD_DOCS))
    docs[1]["relations"][0].append([0, 0, 2, 2, "Synonym-Of"])  # B's gold relation listed twice
    docs[1]["ner"][0].append([0, 0, "Method"])
    gold = gold_bytes(docs)
    lines = perfect_lines()  # one copy of each row (a submission may not repeat rows)
    report = score("scier-ere", lines, gold=gold)
    # NER c=5 p=5 g=6; Rel c=2 p=2 g=3.
    assert report.metrics["ner_r"] == pytest.approx(5 / 6)
    assert report.metrics["rel_p"] == 1.0
    assert report.metrics["rel_r"] == pytest.approx(2 / 3)
    assert score("scier-re", perfect_lines(entities=False), gold=gold).metrics["re_r"] == pytest.approx(2 / 3)


def test_breakdowns() -> None:
    report = score("scier-ere", predicted_lines())
    labels = report.breakdown["relation_label"]
    assert list(labels) == ["Synonym-Of", "Used-For"]
    assert labels["Used-For"] == {
        "rel_p": 1.0,
        "rel_r": 1.0,
        "rel_f1": 1.0,
        "rel_plus_p": 0.0,
        "rel_plus_r": 0.0,
        "rel_plus_f1": 0.0,
    }
    assert labels["Synonym-Of"]["rel_f1"] == 0.0
    types = report.breakdown["entity_type"]
    # Method: gold A 2 + B 2 = 4, predicted A 3 + B 2 = 5, correct 4.
    assert types["Method"] == pytest.approx({"ner_p": 0.8, "ner_r": 1.0, "ner_f1": 8 / 9})
    assert types["Dataset"] == {"ner_p": 0.0, "ner_r": 0.0, "ner_f1": 0.0}  # gold 1, never predicted
    assert types["Task"] == {"ner_p": 0.0, "ner_r": 0.0, "ner_f1": 0.0}  # predicted once, not gold
    documents = report.breakdown["document"]
    # A: NER c=2 p=4 g=3, Rel 1/1/1, Rel+ 0/1/1. B: NER 2/2/2, Rel 0/1/1.
    assert documents["A"]["ner_p"] == 0.5
    assert documents["A"]["ner_r"] == pytest.approx(2 / 3)
    assert documents["A"]["rel_f1"] == 1.0
    assert documents["A"]["rel_plus_f1"] == 0.0
    assert documents["B"]["ner_f1"] == 1.0
    assert documents["B"]["rel_f1"] == 0.0

    re_report = score("scier-re", predicted_lines(entities=False))
    assert set(re_report.breakdown) == {"relation_label", "document"}
    assert re_report.breakdown["relation_label"]["Used-For"] == {"re_p": 1.0, "re_r": 1.0, "re_f1": 1.0}
    assert re_report.breakdown["document"]["B"] == {"re_p": 0.0, "re_r": 0.0, "re_f1": 0.0}


def _shuffled(lines: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """The same submission with lines, rows and keys in another order."""
    rng = random.Random(seed)
    out = []
    for line in lines:
        keys = list(line)
        rng.shuffle(keys)
        copy = {key: json.loads(json.dumps(line[key])) for key in keys}
        for key in ("predicted_ner", "predicted_relations"):
            for rows in copy.get(key, []):
                rng.shuffle(rows)
        out.append(copy)
    rng.shuffle(out)
    return out


@pytest.mark.parametrize("name", ["scier-ere", "scier-re"])
def test_order_of_lines_rows_and_keys_does_not_matter(name: str) -> None:
    lines = predicted_lines(entities=name == "scier-ere")
    lines[0]["predicted_relations"][0].append([4, 4, 2, 2, "Compare-With"])
    lines[0]["predicted_relations"][0].append([2, 2, 2, 2, "Used-For"])
    first = score(name, lines).to_dict(with_units=True)
    gold_docs = json.loads(json.dumps(GOLD_DOCS))[::-1]
    for seed in range(5):
        again = score(name, _shuffled(lines, seed), gold=gold_bytes(gold_docs)).to_dict(with_units=True)
        assert again["metrics"] == first["metrics"]
        assert again["breakdown"]["relation_label"] == first["breakdown"]["relation_label"]
        assert again["units"] == first["units"]


@pytest.mark.parametrize("name", ["scier-ere", "scier-re"])
def test_subset_equals_scoring_the_restricted_gold(name: str) -> None:
    scorer = get_scorer(name)
    entities = name == "scier-ere"
    lines = predicted_lines(entities=entities)
    gold = scorer.parse_gold(gold_bytes())
    submission = scorer.parse_submission(jsonl(lines), scorer.public_view(gold))
    for doc_index, doc_id in enumerate(["A", "B"]):
        on_subset = scorer.compute(gold, submission, units=[doc_id]).metrics
        alone = scorer.score(gold_bytes([GOLD_DOCS[doc_index]]), jsonl([lines[doc_index]])).metrics
        assert on_subset == alone
    # A resample with repeats counts each copy: A twice and B once sums A's counts twice.
    resampled = scorer.compute(gold, submission, units=["A", "A", "B"]).metrics
    if entities:
        # NER: A c=2 p=4 g=3 twice, B 2/2/2: c=6 p=10 g=8.
        assert resampled["ner_p"] == pytest.approx(6 / 10)
        assert resampled["ner_r"] == pytest.approx(6 / 8)
    # Rel: A 1/1/1 twice, B 0/1/1: c=2 p=3 g=3.
    key = "rel_p" if entities else "re_p"
    assert resampled[key] == pytest.approx(2 / 3)


def test_options_are_checked() -> None:
    with pytest.raises(OptionsError, match="symmetric_labels"):
        get_scorer("scier-ere", {"symmetric_labels": "Synonym-Of"})
    with pytest.raises(OptionsError, match="label strings"):
        get_scorer("scier-re", {"symmetric_labels": ["Synonym-Of", 3]})
    with pytest.raises(OptionsError, match="unknown option"):
        get_scorer("scier-re", {"symmetric": ["Synonym-Of"]})
    assert get_scorer("scier-re", {"symmetric_labels": ("Synonym-Of",)}).config["symmetric_labels"] == ["Synonym-Of"]
    with pytest.raises(OptionsError, match="'max_labels' of scier-re must be a positive integer"):
        get_scorer("scier-re", {"max_labels": 0})


def test_described_facts() -> None:
    ere = get_scorer("scier-ere").describe()
    assert ere.primary_metric == "rel_plus_f1"
    assert ere.secondary_metrics == ("rel_f1", "ner_f1")
    assert [(o.name, o.default) for o in ere.options] == [
        ("symmetric_labels", []),
        ("max_entities_per_sentence", 1000),
        ("max_relations_per_sentence", 1000),
        ("max_label_chars", 200),
        ("max_labels", 100),
    ]
    re_ = get_scorer("scier-re").describe()
    assert re_.primary_metric == "re_f1"
    assert [m.name for m in re_.metrics] == ["re_p", "re_r", "re_f1"]
    for described in (ere, re_):
        assert set(described.leaderboard_breakdowns) <= {"relation_label", "entity_type"}
        assert described.submission_filename == "submission.jsonl"


def test_release_dev_split_perfect_submission_keeps_the_repeated_gold_rows() -> None:
    path = require_shared("data", "scier", "PLM", "dev.jsonl")
    gold = path.read_bytes()
    docs = [json.loads(line) for line in gold.splitlines()]
    lines = []
    for doc in docs:
        # A submission may not repeat a row: keep the first copy of each gold relation.
        relations = [list(map(json.loads, dict.fromkeys(map(json.dumps, rows)))) for rows in doc["relations"]]
        lines.append({"doc_id": doc["doc_id"], "predicted_ner": doc["ner"], "predicted_relations": relations})
    report = score("scier-ere", lines, gold=gold)
    assert report.metrics["ner_f1"] == 1.0
    assert report.metrics["rel_p"] == 1.0
    assert report.metrics["rel_r"] == pytest.approx(1130 / 1132, abs=1e-15)  # SCORING.md: 1130/1132


# -- size limits ----------------------------------------------------------------------------------


def refusal(name: str, lines: list[Any], options: dict[str, Any] | None = None, gold: bytes | None = None) -> str:
    """The message ``parse_submission`` refuses the lines with (the test fails if they are accepted)."""
    scorer = get_scorer(name, options)
    with pytest.raises(InvalidSubmission) as caught:
        scorer.parse_submission(
            jsonl(lines), scorer.public_view(scorer.parse_gold(gold if gold is not None else gold_bytes()))
        )
    return str(caught.value)


def test_entity_rows_per_sentence_limit() -> None:
    # A's first sentence holds 2 predicted entities in predicted_lines().
    assert score("scier-ere", predicted_lines(), {"max_entities_per_sentence": 2}).metrics["ner_p"] == 4 / 6
    lines = predicted_lines()
    lines[0]["predicted_ner"][0].append([0, 1, "Task"])
    message = refusal("scier-ere", lines, {"max_entities_per_sentence": 2})
    assert (
        'line 1, document "A", predicted_ner[0]: 3 entity rows; at most 2 are accepted '
        "(option max_entities_per_sentence)"
    ) in message
    assert "1 problem." in message


def test_relation_rows_per_sentence_limit() -> None:
    # Every sentence of predicted_lines() holds at most 1 relation.
    assert score("scier-re", predicted_lines(entities=False), {"max_relations_per_sentence": 1}).metrics["re_p"] == 0.5
    lines = predicted_lines(entities=False)
    lines[1]["predicted_relations"][0].append([0, 0, 2, 2, "Synonym-Of"])
    message = refusal("scier-re", lines, {"max_relations_per_sentence": 1})
    assert (
        'line 2, document "B", predicted_relations[0]: 2 relation rows; at most 1 are accepted '
        "(option max_relations_per_sentence)"
    ) in message


def test_label_length_limit() -> None:
    # A type or label of 200 characters is merely wrong; 201 is refused.
    lines = predicted_lines()
    lines[0]["predicted_ner"][0][1][2] = "T" * 200
    lines[1]["predicted_relations"][0][0][4] = "L" * 200
    report = score("scier-ere", lines)
    assert report.metrics["ner_p"] == 4 / 6  # (4, 4, "Task") was wrong already
    assert "T" * 200 in report.breakdown["entity_type"]
    lines[0]["predicted_ner"][0][1][2] = "T" * 201
    lines[1]["predicted_relations"][0][0][4] = "L" * 201
    message = refusal("scier-ere", lines)
    assert (
        'line 1, document "A", predicted_ner[0][1]: type has 201 characters; at most 200 are accepted '
        "(option max_label_chars)"
    ) in message
    assert 'line 2, document "B", predicted_relations[0][0]: label has 201 characters' in message


def test_distinct_labels_limit() -> None:
    # predicted_lines() uses 2 entity types (Method, Task) and 2 relation labels (Used-For, Synonym-Of).
    lines = predicted_lines()
    lines[0]["predicted_ner"][1].append([7, 7, "Metric"])  # a third type
    assert score("scier-ere", lines, {"max_labels": 3}).metrics["ner_p"] == 4 / 7
    lines[0]["predicted_ner"][1].append([7, 7, "Tool"])  # a fourth
    lines[0]["predicted_relations"][1].append([6, 6, 7, 7, "Part-Of"])
    message = refusal("scier-ere", lines, {"max_labels": 2})
    assert "4 distinct entity types in the file; at most 2 are accepted (option max_labels)" in message
    assert "3 distinct relation labels in the file; at most 2 are accepted (option max_labels)" in message


def test_the_gold_is_held_to_the_same_limits() -> None:
    scorer = get_scorer("scier-ere", {"max_entities_per_sentence": 1})
    with pytest.raises(InvalidGold) as caught:
        scorer.parse_gold(gold_bytes())
    # A's first sentence and B's sentence hold 2 gold entities each.
    assert [str(p) for p in caught.value.problems] == [
        'line 1, document "A", ner[0]: 2 entity rows; at most 1 are accepted (option max_entities_per_sentence)',
        'line 2, document "B", ner[0]: 2 entity rows; at most 1 are accepted (option max_entities_per_sentence)',
    ]


@pytest.mark.parametrize("name", ["scier-ere", "scier-re"])
def test_absurd_files_are_refused_while_they_are_read(name: str) -> None:
    # 200,000 relation rows in one sentence, then a 5 MB label: each refused by parse_submission, by count
    # or length alone, so neither is looked at row by row nor stored in a breakdown.
    lines = perfect_lines(entities=name == "scier-ere")
    lines[0]["predicted_relations"][0] = [[2, 2, 4, 4, "Used-For"]] * 200_000
    assert "200000 relation rows; at most 1000 are accepted" in refusal(name, lines)
    lines = perfect_lines(entities=name == "scier-ere")
    lines[1]["predicted_relations"][0].append([2, 2, 0, 0, "x" * 5_000_000])
    assert "label has 5000000 characters; at most 200 are accepted" in refusal(name, lines)
