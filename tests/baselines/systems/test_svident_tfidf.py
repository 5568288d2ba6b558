"""svident-tfidf-lr: TF-IDF and logistic regression for SV-Ident detection."""

from __future__ import annotations

import json

import pytest

from baselines import Cancelled, InvalidInputs
from tests.baselines.support import EXAMPLES, Recorder, run, score, trivial, tsv_slice
from tests.conftest import require_shared

NAME, SCORER = "svident-tfidf-lr", "svident-detection"
HEADER = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"


def _gold(*rows: tuple[str, int]) -> bytes:
    body = "".join(f"{text}\t{label}\t{'v1' if label else ''}\t\t1\tu{i}\ten\n" for i, (text, label) in enumerate(rows))
    return (HEADER + body).encode()


def test_words_seen_with_one_label_decide_the_label() -> None:
    training = _gold(
        ("respondents rated trust in the police", 1),
        ("respondents rated trust in parliament", 1),
        ("the paper is organised as follows", 0),
        ("section two reviews the literature", 0),
    )
    gold = _gold(("respondents rated trust", 1), ("the literature is organised as follows", 0))
    submission = run(NAME, SCORER, gold, {"train.tsv": training})
    assert json.loads(submission) == {"u0": "1", "u1": "0"}
    assert score(SCORER, gold, submission)["f1"] == 1.0


def test_progress_counts_input_sentences_and_cancel_stops_the_run() -> None:
    training = {"train.tsv": (EXAMPLES / "svident/data/train.tsv").read_bytes()}
    gold = (EXAMPLES / "svident/data/test.tsv").read_bytes()
    recorder = Recorder()
    run(NAME, SCORER, gold, training, recorder=recorder)
    assert recorder.progress[0] == (0, 22)
    assert recorder.progress[-1] == (22, 22)
    with pytest.raises(Cancelled):
        run(NAME, SCORER, gold, training, recorder=Recorder(stop_after=1))


def test_training_with_one_label_only_is_refused() -> None:
    with pytest.raises(InvalidInputs, match=r"all have is_variable 1"):
        run(NAME, SCORER, _gold(("a b", 1)), {"train.tsv": _gold(("a", 1), ("b", 1))})


def test_on_the_example_data_it_beats_the_all_zeros_submission() -> None:
    training = {"train.tsv": (EXAMPLES / "svident/data/train.tsv").read_bytes()}
    gold = (EXAMPLES / "svident/data/test.tsv").read_bytes()
    submission = run(NAME, SCORER, gold, training)
    # The example scores 0.684. All zeros score 1/3: half of each document's sentences are positive, so
    # class 0 has P 1/2, R 1, F1 2/3 and class 1 has F1 0; the macro mean is 1/3 in every document.
    assert score(SCORER, gold, submission)["f1"] > score(SCORER, gold, trivial(SCORER, gold))["f1"] + 0.1
    assert run(NAME, SCORER, gold, training) == submission


def test_on_a_slice_of_the_release_it_beats_the_all_zeros_submission() -> None:
    data = require_shared("data", "svident")
    gold = tsv_slice(data / "val.tsv", slice(0, 200))
    submission = run(NAME, SCORER, gold, {"train.tsv": tsv_slice(data / "train.tsv", slice(0, 1500))})
    # Measured: 0.614 against 0.396 for all zeros.
    assert score(SCORER, gold, submission)["f1"] > score(SCORER, gold, trivial(SCORER, gold))["f1"] + 0.1
