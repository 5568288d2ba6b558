"""FAMuS CDAE holds what recurs once: mention and filler texts, empty roles, equal sums and equal scores."""

from __future__ import annotations

import copy
from typing import Any

from scorers.families.ceaf import score_document
from scorers.families.ceaf_templates import clean_predicted_template, unflatten
from tests.scorers.tasks.famus_data import PAUSE, as_json, cdae, jsonl


def _documents() -> tuple[bytes, bytes]:
    """Three documents with the same gold template and the same predicted one: every text, empty role and sum
    recurs, each parsed from the file as a new object."""
    gold = [{"docid": docid, "templates": [copy.deepcopy(PAUSE)]} for docid in ("A", "B", "C")]
    predicted = {"incident_type": "Pause", "Place": [], "Time": [["April 24 , 2009"]], "Agent": [["airline"]]}
    return jsonl(*gold), as_json({docid: [copy.deepcopy(predicted)] for docid in ("A", "B", "C")})


def _role(template: Any, name: str) -> Any:
    (pair,) = [pair for pair in template.roles if pair[0] == name]
    return pair


def test_gold_holds_each_template_flat_and_each_text_once() -> None:
    gold = cdae().parse_gold(_documents()[0])
    # The frame, then each role and its entities in file order (an empty role's (), one entity of one mention its
    # text), bookkeeping keys left out.
    first, *others = gold.templates.values()  # a document's one template is held alone
    assert first == (
        "Pause",
        "Place",
        (),
        "Time",
        "April 24 , 2009",
        "Agent",
        "the airline",
        "Activity",
        "all of its operations",
    )
    for other in others:
        assert other == first
        assert other[4] is first[4]  # a mention text recurs: one object
        assert all(other[index] is first[index] for index in (0, 1, 3, 5, 7))  # the frame and role names
    # Asked for as Templates, each document is the Template its flat form holds.
    for docid, flat in gold.templates.items():
        assert gold.documents[docid] == [unflatten(flat)]
    assert gold.documents["A"][0].mentions == {"Time": 1, "Agent": 1, "Activity": 1}
    assert gold.documents["A"][0].roles[0] == ("Place", ())


def test_submission_holds_each_text_and_empty_role_once() -> None:
    gold_bytes, submission_bytes = _documents()
    scorer = cdae()
    submission = scorer.parse_submission(submission_bytes, scorer.public_view(scorer.parse_gold(gold_bytes)))
    first, *others = (documents[0] for documents in submission.values())
    for other in others:
        assert other.filled["Time"][0][0] is first.filled["Time"][0][0]
        assert _role(other, "Place") is _role(first, "Place")
        assert _role(other, "Place") == ("Place", ())


def test_submission_is_keyed_by_the_golds_docids() -> None:
    """The documents a submission holds are keyed by the gold's own docid objects, not by a copy of each."""
    gold_bytes, submission_bytes = _documents()
    scorer = cdae()
    public = scorer.public_view(scorer.parse_gold(gold_bytes))
    submission = scorer.parse_submission(submission_bytes, public)
    assert list(submission) == list(public.ids)
    assert all(held is docid for held, docid in zip(submission, public.ids, strict=True))


def test_equal_sums_and_scores_are_one_object_with_the_same_values() -> None:
    gold_bytes, submission_bytes = _documents()
    scorer = cdae()
    report = scorer.score(gold_bytes, submission_bytes)
    units, rows = report.units, report.breakdown["document"]
    assert units["B"]["roles"]["Time"] is units["A"]["roles"]["Time"]
    assert rows["B"] is rows["A"] and rows["C"] is rows["A"]
    # The shared values are those each document gets alone.
    gold = scorer.parse_gold(gold_bytes)
    submission = scorer.parse_submission(submission_bytes, scorer.public_view(gold))
    alone = score_document(gold.documents["B"], submission["B"])  # the general alignment, from Templates
    assert units["B"] == alone
    assert units["B"]["roles"]["Time"] == {"predicted": 1, "gold": 1, "phi3": 1.0, "soft": 1.0}
    assert rows["B"] == scorer.aggregate([alone])


def test_submission_templates_are_cleaned_when_their_document_is_asked_for() -> None:
    gold_bytes, submission_bytes = _documents()
    scorer = cdae()
    submission = scorer.parse_submission(submission_bytes, scorer.public_view(scorer.parse_gold(gold_bytes)))
    assert list(submission) == ["A", "B", "C"] and len(submission) == 3
    first, again = submission["A"], submission.get("A")
    # Held as read, cleaned up afresh each time: equal templates, not one object kept for the document.
    assert first == again and first[0] is not again[0]
    assert first[0] == clean_predicted_template(
        "Pause", [("Place", []), ("Time", ["April 24 , 2009"]), ("Agent", ["airline"])]
    )
    assert submission.get("D") is None
