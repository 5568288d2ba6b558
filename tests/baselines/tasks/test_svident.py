"""Reading SV-Ident files for the baselines: inputs, training formats, variables and candidates."""

from __future__ import annotations

import json

import pytest

from baselines import InvalidInputs, RunContext
from baselines.tasks.svident import (
    Candidates,
    Sentence,
    binary_labels,
    read_inputs,
    read_training,
    require_sentences,
    top_scores,
    variables,
)

TRAIN = (
    "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
    "Trust in the police.\t1\texploredata-ZA1_Varq1;unk\tZA1\t7\tu1\ten\n"
    "Methods follow.\t0\t\t\t7\tu2\ten\n"
    "Police trust again.\t1\texploredata-ZA1_Varq1;exploredata-ZA2_Varq9\tZA1;ZA2\t7\tu3\ten\n"
)


def _context(lines: list[str]) -> RunContext:
    return RunContext(lambda done, total: None, lines.append, lambda: False)


def _files(**files: str) -> dict[str, bytes]:
    return {name.replace("_", "."): text.encode() for name, text in files.items()}


def test_inputs_are_read_in_order_with_their_studies() -> None:
    inputs = "sentence\tresearch_data\tdoc_id\tuuid\tlang\nA b.\tZA1;ZA2\t7\tu1\ten\nC.\t\t7\tu2\tde\n"
    assert read_inputs({"inputs.tsv": inputs.encode()}) == [
        Sentence("u1", "A b.", ("ZA1", "ZA2")),
        Sentence("u2", "C.", ()),
    ]


def test_inputs_with_a_repeated_uuid_or_without_a_column_are_refused() -> None:
    repeated = "sentence\tresearch_data\tuuid\nA.\t\tu1\nB.\t\tu1\n"
    with pytest.raises(InvalidInputs, match=r"^input file 'inputs.tsv', row 3: repeated uuid 'u1'$"):
        read_inputs({"inputs.tsv": repeated.encode()})
    with pytest.raises(InvalidInputs, match=r"missing column\(s\) research_data; the header has sentence, uuid"):
        read_inputs({"inputs.tsv": b"sentence\tuuid\nA.\tu1\n"})


def test_release_training_gives_labelled_sentences_without_unk() -> None:
    lines: list[str] = []
    training = read_training({"train.tsv": TRAIN.encode(), "document_languages.json": b'{"7": "en"}'}, _context(lines))
    assert [(s.is_variable, s.variables) for s in training.sentences] == [
        (True, ("exploredata-ZA1_Varq1",)),
        (False, ()),
        (True, ("exploredata-ZA1_Varq1", "exploredata-ZA2_Varq9")),
    ]
    assert training.vocabulary == {}
    assert lines == [
        "ignoring training file 'document_languages.json': neither labelled sentences nor a variable vocabulary"
    ]
    assert binary_labels(training.sentences) == [1, 0, 1]


def test_profiles_are_the_training_sentences_of_each_variable_and_studies_come_from_the_id() -> None:
    training = read_training({"train.tsv": TRAIN.encode()}, _context([]))
    known = variables(training, {})
    assert list(known) == ["exploredata-ZA1_Varq1", "exploredata-ZA2_Varq9"]
    assert known["exploredata-ZA1_Varq1"].texts == ["Trust in the police.", "Police trust again."]
    assert known["exploredata-ZA1_Varq1"].document() == "Trust in the police. Police trust again."
    assert known["exploredata-ZA1_Varq1"].passages() == ["Trust in the police.", "Police trust again."]
    assert "ZA2" in known["exploredata-ZA2_Varq9"].studies


def test_a_vocabulary_tsv_gives_variable_texts_and_studies() -> None:
    vocabulary = "variable\tresearch_data\tstudy_title\tvariable_label\nexploredata-ZA1_Varq1\tZA1\tStudy\tTrust\n"
    training = read_training({"train.tsv": TRAIN.encode(), "variables.tsv": vocabulary.encode()}, _context([]))
    known = variables(training, {})
    # The vocabulary text wins over the profile; the study title says nothing about one variable.
    assert known["exploredata-ZA1_Varq1"].texts == ["Trust"]
    assert known["exploredata-ZA1_Varq1"].passages() == ["Trust"]
    assert known["exploredata-ZA1_Varq1"].studies == {"ZA1"}
    # A variable the vocabulary lacks keeps its profile.
    assert known["exploredata-ZA2_Varq9"].texts == ["Police trust again."]


def test_the_trial_vocabulary_format_is_read_by_its_id_column() -> None:
    trial = "id\tlabel\ttopic\tquestion\tanswer\nv16\tSATISFACTION\tPolitics\tHow satisfied?\tVery;Not\n"
    training = read_training({"vocabulary/en.tsv": trial.encode()}, _context([]))
    assert training.vocabulary["v16"].texts == ["SATISFACTION", "Politics", "How satisfied?", "Very;Not"]


def test_the_release_metadata_json_is_a_vocabulary_grouped_by_study() -> None:
    metadata = {"ZA1": {"exploredata-ZA1_Varq1": {"study_title": "S", "variable_label": "Trust", "topic": ["A", "B"]}}}
    training = read_training({"variables_metadata.json": json.dumps(metadata).encode()}, _context([]))
    entry = training.vocabulary["exploredata-ZA1_Varq1"]
    assert (entry.texts, entry.studies) == (["Trust", "A", "B"], {"ZA1"})


def test_missing_training_data_is_refused_with_the_file_names() -> None:
    training = read_training({}, _context([]))
    with pytest.raises(InvalidInputs, match=r"no labelled training sentences: .* \(none\)"):
        require_sentences(training, {})
    with pytest.raises(InvalidInputs, match=r"no variables to rank: .* \('notes.txt'\)"):
        variables(training, {"notes.txt": b""})
    bad = "sentence\tis_variable\nA.\tyes\n"
    with pytest.raises(InvalidInputs, match=r"^training file 't.tsv', row 2: is_variable is 'yes'; expected 0 or 1$"):
        read_training({"t.tsv": bad.encode()}, _context([]))


def test_a_classifier_needs_both_labels() -> None:
    training = read_training({"t.tsv": b"sentence\tis_variable\nA.\t0\nB.\t0\n"}, _context([]))
    with pytest.raises(InvalidInputs, match=r"all have is_variable 0; a classifier needs both 0 and 1"):
        binary_labels(training.sentences)


def test_candidates_are_the_variables_of_the_sentence_studies_else_all() -> None:
    known = variables(read_training({"train.tsv": TRAIN.encode()}, _context([])), {})
    candidates = Candidates(known)
    assert candidates.of(Sentence("u", "x", ("ZA2",))) == [1]
    assert candidates.of(Sentence("u", "x", ("ZA1", "ZA2"))) == [0, 1]
    assert candidates.of(Sentence("u", "x", ("ZA404",))) == [0, 1]
    assert candidates.of(Sentence("u", "x", ())) == [0, 1]


def test_top_scores_keep_the_best_with_ties_broken_by_id() -> None:
    ids = ["c", "a", "b"]
    assert top_scores(ids, [0, 1, 2], [0.5, 0.5, 0.9], 2) == {"b": 0.9, "a": 0.5}
    assert top_scores(ids, [0, 2], [0.1234567, 0.0], 5) == {"c": 0.123457, "b": 0.0}
