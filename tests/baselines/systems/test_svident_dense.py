"""svident-minilm-dense: ranking candidate variables by MiniLM cosine similarity."""

from __future__ import annotations

import json

import pytest

from baselines import Cancelled
from tests.baselines.support import EXAMPLES, Recorder, run, score, tsv_rows, tsv_slice
from tests.conftest import require_shared

pytestmark = pytest.mark.slow

NAME, SCORER = "svident-minilm-dense", "svident-disambiguation"
HEADER = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"


def test_profiles_are_mean_embeddings_and_the_closer_variable_ranks_first() -> None:
    training = (
        HEADER
        + "People were asked how far they trust the police.\t1\texploredata-ZA1_Varq1\tZA1\t1\tt1\ten\n"
        + "Confidence in the police was high.\t1\texploredata-ZA1_Varq1\tZA1\t1\tt2\ten\n"
        + "Monthly household income was recorded in euros.\t1\texploredata-ZA1_Varq2\tZA1\t1\tt3\ten\n"
        + "Unrelated sentence about methods.\t0\t\t\t1\tt4\ten\n"
    ).encode()
    gold = (HEADER + "Trust in the police is low.\t1\texploredata-ZA1_Varq1\tZA1\t2\tu1\ten\n").encode()
    recorder = Recorder()
    submission = json.loads(run(NAME, SCORER, gold, {"train.tsv": training}, recorder=recorder))
    scores = submission["u1"]
    assert list(scores) == ["exploredata-ZA1_Varq1", "exploredata-ZA1_Varq2"]
    assert -1.0 <= scores["exploredata-ZA1_Varq2"] < scores["exploredata-ZA1_Varq1"] <= 1.0
    # Three profile passages (the negative sentence is no variable's text) and one input sentence.
    assert recorder.progress[0] == (0, 4)
    assert recorder.progress[-1] == (4, 4)


def test_on_the_example_vocabulary_it_ranks_well_and_cancel_stops_it() -> None:
    data = EXAMPLES / "svident/data"
    training = {"train.tsv": (data / "train.tsv").read_bytes(), "variables.tsv": (data / "variables.tsv").read_bytes()}
    gold = (data / "test.tsv").read_bytes()
    submission = run(NAME, SCORER, gold, training)
    # Measured: 0.917; empty rankings score 0.
    assert score(SCORER, gold, submission)["map@10"] > 0.5
    with pytest.raises(Cancelled):
        run(NAME, SCORER, gold, training, recorder=Recorder(stop_after=2))


def test_on_a_slice_of_the_release_with_profiles_from_training() -> None:
    data = require_shared("data", "svident")
    gold = tsv_slice(data / "val.tsv", slice(0, 60))
    studies = {s for row in tsv_rows(data / "val.tsv")[:60] for s in row["research_data"].split(";") if s}
    rows = [
        i
        for i, row in enumerate(tsv_rows(data / "train.tsv"))
        if row["is_variable"] == "1" and studies & set(row["research_data"].split(";"))
    ][:120]
    submission = run(NAME, SCORER, gold, {"train.tsv": tsv_slice(data / "train.tsv", rows)})
    # Measured: 0.546 with 120 profile sentences of the slice's studies; empty rankings score 0.
    assert score(SCORER, gold, submission)["map@10"] > 0.3
