"""scier-gazetteer: gazetteer entities and type-pair relations for SciER."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from baselines import Cancelled, InvalidInputs
from baselines.systems.scier_gazetteer import Gazetteer, PairRule, _most_frequent
from baselines.tasks.scier import TrainingSentence
from tests.baselines.support import EXAMPLES, Recorder, lines_slice, run, score, trivial
from tests.conftest import require_shared

NAME = "scier-gazetteer"


def _jsonl(*lines: object) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


TRAINING = _jsonl(
    {
        "sentence": "We use BERT for parsing .",
        "ner": [["BERT", "Method"], ["parsing", "Task"]],
        "rel": [["BERT", "Used-For", "parsing"]],
    },
    {"sentence": "BERT and ELMo help .", "ner": [["BERT", "Method"], ["ELMo", "Method"]], "rel": []},
    {"sentence": "neural parsing works .", "ner": [["neural parsing", "Task"]], "rel": []},
)
GOLD = _jsonl(
    {
        "doc_id": "d1",
        "sentences": [["ELMo", "for", "neural", "parsing", "."], ["BERT", "parsing"]],
        "ner": [[[0, 0, "Method"], [2, 3, "Task"]], [[5, 5, "Method"], [6, 6, "Task"]]],
        "relations": [[[0, 0, 2, 3, "Used-For"]], [[5, 5, 6, 6, "Used-For"]]],
    }
)


def test_the_gazetteer_tags_the_longest_match_without_overlaps() -> None:
    gazetteer = Gazetteer(
        [
            TrainingSentence([], [("neural parsing", "Task"), ("parsing", "Task"), ("neural", "Method")]),
            TrainingSentence([], [("parsing", "Method"), ("parsing", "Task")]),
        ]
    )
    # "parsing" is Task twice and Method once, so Task; "neural parsing" beats "neural" at position 1.
    assert gazetteer.types[("parsing",)] == "Task"
    assert gazetteer.tag(["good", "neural", "parsing", "and", "neural", "nets"]) == [(1, 2, "Task"), (4, 4, "Method")]


def test_a_tie_goes_to_the_outcome_that_sorts_first_so_no_relation_wins() -> None:
    assert _most_frequent(Counter({"Used-For": 1, "": 1})) == ""
    assert _most_frequent(Counter({"Used-For": 2, "": 1, "Part-Of": 2})) == "Part-Of"


def test_the_pair_rule_keeps_descriptions_whose_most_frequent_outcome_is_a_label() -> None:
    sentences = [
        TrainingSentence([], [], [(0, 0, "Method"), (2, 2, "Task")], [(0, 0, 2, 2, "Used-For")]),
        TrainingSentence([], [], [(0, 0, "Method"), (2, 2, "Task"), (4, 4, "Task")], [(0, 0, 2, 2, "Used-For")]),
        TrainingSentence([], [], [(0, 0, "Task"), (1, 1, "Method")], []),
    ]
    rule = PairRule(sentences)
    # (Method, Task, subject first, neighbours): Used-For twice, never unrelated -> kept. (Method, Task,
    # first, not neighbours): once, unrelated -> dropped. (Task, Method, ...) pairs are all unrelated.
    assert rule.labels == {("Method", "Task", True, True): "Used-For"}
    assert rule.relations([(7, 8, "Method"), (9, 9, "Task"), (3, 3, "Task")]) == [(7, 8, 9, 9, "Used-For")]


def test_end_to_end_on_a_hand_made_document() -> None:
    # Gazetteer: BERT, ELMo -> Method; parsing, neural parsing -> Task. Rule: a Method followed directly
    # by a Task is Used-For (the only related pair of the training data). Sentence 2 starts at token 5.
    submission = run(NAME, "scier-ere", GOLD, {"train.jsonl": TRAINING})
    assert json.loads(submission) == {
        "doc_id": "d1",
        "predicted_ner": [[[0, 0, "Method"], [2, 3, "Task"]], [[5, 5, "Method"], [6, 6, "Task"]]],
        "predicted_relations": [[[0, 0, 2, 3, "Used-For"]], [[5, 5, 6, 6, "Used-For"]]],
    }
    assert score("scier-ere", GOLD, submission)["rel_plus_f1"] == 1.0


def test_relation_extraction_uses_the_given_entities() -> None:
    gold = _jsonl(
        {
            "doc_id": "d1",
            "sentences": [["Our", "tagger", "does", "parsing"]],
            "ner": [[[1, 1, "Method"], [3, 3, "Task"]]],
            "relations": [[[1, 1, 3, 3, "Used-For"]]],
        }
    )
    # "tagger" is in no gazetteer, but RE is given the gold entities.
    submission = run(NAME, "scier-re", gold, {"train.jsonl": TRAINING})
    assert json.loads(submission) == {"doc_id": "d1", "predicted_relations": [[[1, 1, 3, 3, "Used-For"]]]}


def test_progress_counts_sentences_and_cancel_stops_the_run() -> None:
    recorder = Recorder()
    run(NAME, "scier-ere", GOLD, {"train.jsonl": TRAINING}, recorder=recorder)
    assert recorder.progress == [(0, 2), (2, 2)]
    with pytest.raises(Cancelled):
        run(NAME, "scier-ere", GOLD, {"train.jsonl": TRAINING}, recorder=Recorder(stop_after=1))


def test_training_in_the_wrong_shape_is_refused() -> None:
    with pytest.raises(InvalidInputs, match=r"no annotated training sentences"):
        run(NAME, "scier-ere", GOLD, {"train.tsv": b"a\tb\n"})


def test_on_the_example_data_the_submissions_are_accepted() -> None:
    data = EXAMPLES / "scier/data"
    training = {"train-sentences.jsonl": (data / "train.jsonl").read_bytes()}
    gold = (data / "dev.jsonl").read_bytes()
    # Relation extraction is given the entities, so it beats the empty submission (measured: 0.588).
    relations = run(NAME, "scier-re", gold, training)
    assert score("scier-re", gold, relations)["re_f1"] > score("scier-re", gold, trivial("scier-re", gold))["re_f1"]
    assert run(NAME, "scier-re", gold, training) == relations
    # The end-to-end file is accepted (parse_submission refuses malformed rows) and scored.
    assert "rel_plus_f1" in score("scier-ere", gold, run(NAME, "scier-ere", gold, training))


def test_on_the_example_data_end_to_end_beats_the_empty_submission() -> None:
    # Measured: NER 0.455, Rel+ 0.308 (the training sentences name some of the dev papers' entities).
    data = EXAMPLES / "scier/data"
    gold = (data / "dev.jsonl").read_bytes()
    submission = run(NAME, "scier-ere", gold, {"train-sentences.jsonl": (data / "train.jsonl").read_bytes()})
    assert score("scier-ere", gold, submission)["ner_f1"] > 0


@pytest.mark.parametrize("split", ["dev", "test"])
def test_on_a_slice_of_the_release_ner_rel_and_rel_plus_are_clearly_above_zero(split: str) -> None:
    data = require_shared("data", "scier")
    training = {"train.jsonl": (data / "LLM/train.jsonl").read_bytes()}
    gold = lines_slice(data / f"PLM/{split}.jsonl", 3)
    assert score("scier-ere", gold, trivial("scier-ere", gold))["rel_plus_f1"] == 0.0
    metrics = score("scier-ere", gold, run(NAME, "scier-ere", gold, training))
    # Measured on the first three papers: dev NER 0.575, Rel 0.086, Rel+ 0.086; test 0.503, 0.118, 0.118.
    assert metrics["ner_f1"] > 0.4
    assert metrics["rel_f1"] > 0.05
    assert metrics["rel_plus_f1"] > 0.05
    # With the gold entities given, relations are found far more often (dev 0.253, test 0.338).
    assert score("scier-re", gold, run(NAME, "scier-re", gold, training))["re_f1"] > 0.2
