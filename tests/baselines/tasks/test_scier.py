"""Reading SciER files for the baselines: both training formats, and the documents to tag."""

from __future__ import annotations

import json

import pytest

from baselines import InvalidInputs
from baselines.tasks.scier import TrainingSentence, read_documents, read_training


def _jsonl(*lines: object) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_sentence_format_mentions_are_placed_at_their_first_occurrence() -> None:
    line = {
        "doc_id": "1",
        "sentence": "We train BERT on SQuAD and BERT wins .",
        "ner": [["BERT", "Method"], ["SQuAD", "Dataset"], ["RoBERTa", "Method"]],
        "rel": [["BERT", "Trained-With", "SQuAD"], ["RoBERTa", "Compare-With", "BERT"]],
    }
    (sentence,) = read_training({"train.jsonl": _jsonl(line)})
    assert sentence.mentions == [("BERT", "Method"), ("SQuAD", "Dataset"), ("RoBERTa", "Method")]
    # "BERT" is tokens 2..2 (its first occurrence), "SQuAD" 4..4; "RoBERTa" is not in the sentence,
    # so it is only a gazetteer entry and its relation cannot be placed.
    assert sentence.entities == [(2, 2, "Method"), (4, 4, "Dataset")]
    assert sentence.relations == [(2, 2, 4, 4, "Trained-With")]


def test_span_format_offsets_become_sentence_relative() -> None:
    document = {
        "doc_id": "d",
        "sentences": [["A", "model", "."], ["We", "use", "ImageNet", "data"]],
        "ner": [[[0, 1, "Method"]], [[5, 6, "Dataset"]]],
        "relations": [[], [[5, 6, 5, 6, "Synonym-Of"]]],
    }
    first, second = read_training({"train.jsonl": _jsonl(document)})
    assert first == TrainingSentence(["A", "model", "."], [("A model", "Method")], [(0, 1, "Method")], [])
    # Sentence 2 starts at document token 3, so [5, 6] is [2, 3] inside it.
    assert second.entities == [(2, 3, "Dataset")]
    assert second.mentions == [("ImageNet data", "Dataset")]
    assert second.relations == [(2, 3, 2, 3, "Synonym-Of")]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"sentence": "A", "ner": [["A"]]}, "line 1: expected sentence as a string, ner as \\[text, type\\] pairs"),
        ({"sentences": [["A"]], "ner": [[[3, 3, "Task"]]]}, "line 1, ner\\[0\\]: span \\[3, 3\\] lies outside"),
        ({"sentences": [["A"]], "ner": []}, "line 1: expected sentences as token lists and ner as one list"),
        (
            {"sentences": [["A"]], "ner": [[]], "relations": [[[0, 0, "0", 0, "X"]]]},
            "line 1, relations\\[0\\]: expected \\[s1, e1, s2, e2, label\\] rows",
        ),
        ({"text": "A"}, "line 1: expected a sentence line \\(sentence, ner, rel\\) or a document line"),
    ],
)
def test_malformed_training_lines_are_refused_by_line(line: object, message: str) -> None:
    with pytest.raises(InvalidInputs, match=r"^training file 't.jsonl', " + message):
        read_training({"t.jsonl": _jsonl(line)})


def test_training_without_annotations_is_refused() -> None:
    with pytest.raises(InvalidInputs, match=r"no annotated training sentences: .*\('notes.md'\)"):
        read_training({"notes.md": b"# notes"})


def test_documents_get_the_offset_of_each_sentence_and_the_given_entities() -> None:
    inputs = _jsonl({"doc_id": "d", "sentences": [["A", "b"], ["c"]], "ner": [[[0, 1, "Task"]], []]})
    (document,) = read_documents({"inputs.jsonl": inputs}, with_entities=True)
    assert (document.doc_id, document.offsets, document.entities) == ("d", [0, 2], [[(0, 1, "Task")], []])
    (plain,) = read_documents({"inputs.jsonl": inputs}, with_entities=False)
    assert plain.entities is None


def test_bad_documents_are_refused_by_line() -> None:
    repeated = _jsonl({"doc_id": "d", "sentences": []}, {"doc_id": "d", "sentences": []})
    with pytest.raises(InvalidInputs, match=r"^input file 'inputs.jsonl', line 2: doc_id must be a string not seen"):
        read_documents({"inputs.jsonl": repeated}, with_entities=False)
    with pytest.raises(InvalidInputs, match=r"line 1: missing key\(s\) ner$"):
        read_documents({"inputs.jsonl": _jsonl({"doc_id": "d", "sentences": []})}, with_entities=True)
    with pytest.raises(InvalidInputs, match=r"line 1: ner must hold one list of \[start, end, type\] rows per"):
        read_documents({"inputs.jsonl": _jsonl({"doc_id": "d", "sentences": [["a"]], "ner": []})}, with_entities=True)
