"""svident-bm25: BM25 ranking of each sentence's candidate variables."""

from __future__ import annotations

import json

import pytest

from baselines import Cancelled, InvalidInputs
from tests.baselines.support import EXAMPLES, Recorder, run, score, trivial, tsv_slice
from tests.conftest import require_shared

NAME, SCORER = "svident-bm25", "svident-disambiguation"
HEADER = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
VOCABULARY = (
    "variable\tresearch_data\tvariable_label\n"
    "exploredata-ZA1_Varq1\tZA1\ttrust in the police\n"
    "exploredata-ZA1_Varq2\tZA1\tincome of the household\n"
    "exploredata-ZA2_Varq3\tZA2\ttrust in the police force\n"
)


def _example() -> tuple[bytes, dict[str, bytes]]:
    data = EXAMPLES / "svident/data"
    training = {"train.tsv": (data / "train.tsv").read_bytes(), "variables.tsv": (data / "variables.tsv").read_bytes()}
    return (data / "test.tsv").read_bytes(), training


def test_the_variable_sharing_the_sentence_words_ranks_first_among_its_study() -> None:
    gold = (
        HEADER
        + "How much do people trust the police?\t1\texploredata-ZA1_Varq1\tZA1\t1\tu1\ten\n"
        + "Household income was asked.\t1\texploredata-ZA1_Varq2\tZA1\t1\tu2\ten\n"
    ).encode()
    submission = json.loads(run(NAME, SCORER, gold, {"variables.tsv": VOCABULARY.encode()}))
    # Only ZA1's variables are candidates (the inputs list ZA1 for the whole document), so the ZA2
    # variable with the same words is never listed; "police"/"trust" match q1 only, "household"/"income" q2 only.
    # BM25 (Lucene variant) over the three variable texts without stop words: q1 = [trust, police],
    # q2 = [income, household], q3 = [trust, police, force]; N = 3, average length 7/3. "trust" and
    # "police" occur in 2 texts: idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln 1.6. Each occurs once in
    # q1 (length 2): tf part = 1 / (1 + 1.5 * (0.25 + 0.75 * 2 / (7/3))) = 1 / 2.3392857.
    # Score = 2 * ln 1.6 / 2.3392857 = 0.401835.
    assert submission["u1"] == {"exploredata-ZA1_Varq1": 0.401835, "exploredata-ZA1_Varq2": 0.0}
    assert next(iter(submission["u2"])) == "exploredata-ZA1_Varq2"
    assert score(SCORER, gold, json.dumps(submission).encode())["map@10"] == 1.0


def test_max_candidates_caps_each_ranking() -> None:
    gold = (HEADER + "Trust in the police.\t1\texploredata-ZA1_Varq1\t\t1\tu1\ten\n").encode()
    submission = json.loads(run(NAME, SCORER, gold, {"v.tsv": VOCABULARY.encode()}, options={"max_candidates": 2}))
    # No study is named, so all three variables are candidates. q1 and q3 both hold "trust" and "police";
    # q1's text is shorter, so BM25's length normalisation puts it first. q2 shares no word and is cut.
    assert list(submission["u1"]) == ["exploredata-ZA1_Varq1", "exploredata-ZA2_Varq3"]


def test_a_sentence_of_stop_words_alone_lists_its_candidates_at_0() -> None:
    gold = (
        HEADER
        + "And of the.\t0\t\tZA1\t1\tu1\ten\n"
        + "\t0\t\tZA1\t1\tu2\ten\n"
        + "Trust in the police.\t1\texploredata-ZA1_Varq1\tZA1\t1\tu3\ten\n"
    ).encode()
    submission = json.loads(run(NAME, SCORER, gold, {"variables.tsv": VOCABULARY.encode()}))
    # No word is left to search with: the study's two variables, both 0, in the order of their ids.
    assert submission["u1"] == submission["u2"] == {"exploredata-ZA1_Varq1": 0.0, "exploredata-ZA1_Varq2": 0.0}
    assert next(iter(submission["u3"])) == "exploredata-ZA1_Varq1"
    assert score(SCORER, gold, json.dumps(submission).encode())["map@10"] == 1.0


def test_without_a_vocabulary_or_annotated_sentences_it_is_refused() -> None:
    gold = (HEADER + "A.\t0\t\t\t1\tu1\ten\n").encode()
    with pytest.raises(InvalidInputs, match=r"no variables to rank"):
        run(NAME, SCORER, gold, {"train.tsv": gold})


def test_progress_counts_input_sentences_and_cancel_stops_the_run() -> None:
    gold, training = _example()
    recorder = Recorder()
    run(NAME, SCORER, gold, training, recorder=recorder)
    assert (recorder.progress[0], recorder.progress[-1]) == ((0, 22), (22, 22))
    with pytest.raises(Cancelled):
        run(NAME, SCORER, gold, training, recorder=Recorder(stop_after=1))


def test_on_the_example_data_it_ranks_well_and_twice_the_same() -> None:
    gold, training = _example()
    submission = run(NAME, SCORER, gold, training)
    assert score(SCORER, gold, trivial(SCORER, gold))["map@10"] == 0.0
    # Measured: 0.851.
    assert score(SCORER, gold, submission)["map@10"] > 0.5
    assert run(NAME, SCORER, gold, training) == submission


def test_on_a_slice_of_the_release_with_profiles_from_training() -> None:
    data = require_shared("data", "svident")
    gold = tsv_slice(data / "val.tsv", slice(0, 200))
    submission = run(NAME, SCORER, gold, {"train.tsv": (data / "train.tsv").read_bytes()})
    # Measured: 0.688; empty rankings score 0.
    assert score(SCORER, gold, submission)["map@10"] > 0.4
