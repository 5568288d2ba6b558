"""Reading FAMuS files for the baselines: source-validation pairs, CDAE inputs and IterX gold."""

from __future__ import annotations

import json

import pytest

from baselines import InvalidInputs
from baselines.tasks.famus import (
    CdaeItem,
    SourcePair,
    pick_iterx_resource,
    read_cdae_items,
    read_iterx_gold,
    read_source_pairs,
)


def _jsonl(*lines: object) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


PAIR = {
    "instance_id": "i1",
    "frame": "Arrest",
    "report_dict": {"doctext": "Police arrested him .", "frame-trigger-span": ["arrested", 7, 14, 1, 1, ""]},
    "source_dict": {"doctext": "He was arrested ."},
}
GOLD = {"docid": "d1", "templates": [{"incident_type": "Arrest", "Suspect": [[["him", 0, 2]]], "Place": []}]}


def test_source_pairs_carry_the_trigger_text_and_the_source_text() -> None:
    assert read_source_pairs({"inputs.jsonl": _jsonl(PAIR)}) == [SourcePair("i1", "arrested", "He was arrested .")]


def test_a_pair_without_a_trigger_or_with_a_repeated_id_is_refused() -> None:
    no_trigger = {**PAIR, "report_dict": {"doctext": "x"}}
    with pytest.raises(InvalidInputs, match=r"line 1: report_dict.frame-trigger-span must be a list whose first"):
        read_source_pairs({"inputs.jsonl": _jsonl(no_trigger)})
    with pytest.raises(InvalidInputs, match=r"^input file 'inputs.jsonl', line 2: instance_id 'i1' is repeated$"):
        read_source_pairs({"inputs.jsonl": _jsonl(PAIR, PAIR)})


def test_cdae_items_accept_a_null_frame_and_skip_the_documents_file() -> None:
    items = _jsonl(
        {"docid": "d1", "incident_type": "Arrest", "roles": ["Place"]}, {"docid": "d2", "incident_type": None}
    )
    files = {"documents.jsonl": _jsonl({"instance_id": "d1"}), "questions.jsonl": items}
    assert read_cdae_items(files) == [CdaeItem("d1", "Arrest", ("Place",)), CdaeItem("d2", None, ())]


def test_iterx_gold_is_read_by_docid_and_checked() -> None:
    assert read_iterx_gold("g", _jsonl(GOLD)) == {"d1": GOLD["templates"]}
    bad = {"docid": "d1", "templates": [{"incident_type": "Arrest", "Suspect": ["him"]}]}
    with pytest.raises(InvalidInputs, match=r"^g, line 1, role 'Suspect': expected a list of entities"):
        read_iterx_gold("g", _jsonl(bad))
    with pytest.raises(InvalidInputs, match=r"^g, line 1: each template must be an object with a string"):
        read_iterx_gold("g", _jsonl({"docid": "d1", "templates": [{}]}))


def test_the_report_gold_resource_is_the_only_iterx_file_or_the_one_named() -> None:
    gold = _jsonl(GOLD)
    assert pick_iterx_resource({"notes.jsonl": b'{"a": 1}', "report.jsonl": gold}, "") == ("report.jsonl", gold)
    assert pick_iterx_resource({"a.jsonl": gold, "b.jsonl": gold}, "b.jsonl") == ("b.jsonl", gold)
    with pytest.raises(InvalidInputs, match=r"found several: 'a.jsonl', 'b.jsonl'"):
        pick_iterx_resource({"a.jsonl": gold, "b.jsonl": gold}, "")
    with pytest.raises(InvalidInputs, match=r"^resource 'c.jsonl' not found \(resources: 'a.jsonl'\)$"):
        pick_iterx_resource({"a.jsonl": gold}, "c.jsonl")
