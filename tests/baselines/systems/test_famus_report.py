"""famus-cdae-report: the report's gold arguments predicted as the source's (FAMuS's report baseline)."""

from __future__ import annotations

import json

import pytest

from baselines import Cancelled, InvalidInputs
from baselines.systems.famus_report import as_prediction
from tests.baselines.support import EXAMPLES, Recorder, lines_slice, run, score, trivial
from tests.conftest import require_shared

NAME, SCORER = "famus-cdae-report", "famus-cdae"


def _jsonl(*lines: object) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_a_template_keeps_each_entity_first_mention_and_drops_empty_roles() -> None:
    template = {
        "incident_type": "Arrest",
        "Suspect": [[["Hart", 0, 3], ["he", 9, 10]], [["a man"]]],
        "Place": [],
        "template-spans": [1, 2],
    }
    assert as_prediction(template) == {"incident_type": "Arrest", "Suspect": [["Hart"], ["a man"]]}
    assert as_prediction({"incident_type": "Arrest", "Place": []}) is None


def test_every_input_document_gets_the_report_templates_or_none() -> None:
    report = _jsonl(
        {"docid": "d1", "templates": [{"incident_type": "Arrest", "Suspect": [[["Hart"]]], "Place": []}]},
        {"docid": "d2", "templates": [{"incident_type": "Hiring", "Employee": []}]},
    )
    source_gold = _jsonl(
        {"docid": "d1", "templates": [{"incident_type": "Arrest", "Suspect": [[["Daniel Hart"]]], "Place": []}]},
        {"docid": "d2", "templates": [{"incident_type": "Hiring", "Employee": [[["Ruiz"]]]}]},
        {"docid": "d3", "templates": [{"incident_type": "Hiring", "Employee": [[["Ruiz"]]]}]},
    )
    recorder = Recorder()
    submission = run(NAME, SCORER, source_gold, resources={"report-gold.jsonl": report}, recorder=recorder)
    assert json.loads(submission) == {
        "d1": [{"incident_type": "Arrest", "Suspect": [["Hart"]]}],
        "d2": [],
        "d3": [],
    }
    assert recorder.lines == ["1 of 3 documents are not in the report gold and get no template"]
    # Soft match: "Hart" against "Daniel Hart" is 2 * 1 / (1 + 2) = 2/3 of one predicted and three
    # gold mentions: P 2/3, R 2/9, F1 = 2 * (2/3) * (2/9) / (8/9) = 1/3.
    assert score(SCORER, source_gold, submission)["ceaf_rme_soft_f1"] == pytest.approx(1 / 3)


def test_without_the_report_gold_resource_it_is_refused() -> None:
    gold = (EXAMPLES / "famus/data/source-gold.jsonl").read_bytes()
    with pytest.raises(InvalidInputs, match=r"expected exactly one IterX gold file .* found none \(resources: none\)"):
        run(NAME, SCORER, gold)


def test_progress_counts_documents_and_cancel_stops_the_run() -> None:
    data = EXAMPLES / "famus/data"
    resources = {"report-gold.jsonl": (data / "report-gold.jsonl").read_bytes()}
    gold = (data / "source-gold.jsonl").read_bytes()
    recorder = Recorder()
    run(NAME, SCORER, gold, resources=resources, recorder=recorder)
    assert recorder.progress == [(0, 6), (6, 6)]
    with pytest.raises(Cancelled):
        run(NAME, SCORER, gold, resources=resources, recorder=Recorder(stop_after=1))


def test_on_the_example_data_it_beats_the_empty_submission() -> None:
    data = EXAMPLES / "famus/data"
    resources = {"report-gold.jsonl": (data / "report-gold.jsonl").read_bytes()}
    documents = {"documents.jsonl": (data / "documents.jsonl").read_bytes()}
    gold = (data / "source-gold.jsonl").read_bytes()
    submission = run(NAME, SCORER, gold, resources=resources, extra_inputs=documents)
    assert score(SCORER, gold, trivial(SCORER, gold))["ceaf_rme_soft_f1"] == 0.0
    # Measured: 0.321.
    assert score(SCORER, gold, submission)["ceaf_rme_soft_f1"] > 0.2


def test_on_the_addendum_it_reproduces_the_official_report_baseline() -> None:
    case = require_shared("conformance", "famus-cdae", "addendum-source-report-baseline")
    derived = require_shared("data", "famus", "derived")
    gold = (case / "gold.jsonl").read_bytes()
    submission = run(
        NAME, SCORER, gold, resources={"r.jsonl": (derived / "addendum_report_gold_iterx.jsonl").read_bytes()}
    )
    expected = json.loads((case / "expected.json").read_bytes())["metrics"]
    assert score(SCORER, gold, submission) == pytest.approx(expected, abs=1e-9)


def test_on_a_slice_of_the_dev_split_it_beats_the_empty_submission() -> None:
    derived = require_shared("data", "famus", "derived")
    gold = lines_slice(derived / "dev_source_gold_iterx.jsonl", 100)
    resources = {"report.jsonl": (derived / "dev_report_gold_iterx.jsonl").read_bytes()}
    # Measured: soft F1 0.403, exact 0.188; the empty submission scores 0.
    metrics = score(SCORER, gold, run(NAME, SCORER, gold, resources=resources))
    assert metrics["ceaf_rme_soft_f1"] > 0.3
    assert metrics["ceaf_rme_phi3_f1"] > 0.1
