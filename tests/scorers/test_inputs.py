"""Participant inputs: the gold without its answers, one row or line per gold row or line, same ids."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scorers.errors import InvalidGold, UnknownScorer
from scorers.inputs import input_formats, participant_inputs, renamable_formats, rename_ids
from scorers.io import read_tsv
from scorers.registry import scorer_names
from tests.conftest import ROOT

EXAMPLE_DATA = ROOT / "examples"

SVIDENT_GOLD = (
    b"sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
    b"Trust in parliament was measured.\t1\texploredata-EX1_Varq1\tEX1\td1\tu1\ten\n"
    b'"A ""quoted""\tsentence."\t0\t\t\td1\tu2\ten\n'
    b"Income and household size were asked.\t1\texploredata-EX2_Varv4;unk\tEX2\td1\tu3\ten\n"
    b"Die Stichprobe ist klein.\t0\t\t\td2\tu4\tde\n"
)


def json_lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode().splitlines() if line.strip()]


def to_bytes(*objects: dict[str, Any]) -> bytes:
    return "".join(json.dumps(obj) + "\n" for obj in objects).encode()


@pytest.mark.parametrize("scorer", ["svident-detection", "svident-disambiguation"])
def test_svident_inputs_drop_the_labels_and_keep_rows_and_quoting(scorer: str) -> None:
    name, data = participant_inputs(scorer, SVIDENT_GOLD)
    rows = read_tsv(data, InvalidGold)
    assert name == "inputs.tsv"
    assert rows[0] == ["sentence", "research_data", "doc_id", "uuid", "lang"]
    assert [row[3] for row in rows[1:]] == ["u1", "u2", "u3", "u4"]
    assert rows[2][0] == 'A "quoted"\tsentence.'  # the tab and the quotes survive the round trip


def test_svident_research_data_is_the_documents_not_the_sentences() -> None:
    # In the release only sentences that mention a variable list studies; copied as is, the column
    # would be the detection answer. d1 lists EX1 (row 1) then EX2 (row 3); d2 lists none.
    _, data = participant_inputs("svident-detection", SVIDENT_GOLD)
    assert [row[1] for row in read_tsv(data, InvalidGold)[1:]] == ["EX1;EX2", "EX1;EX2", "EX1;EX2", ""]


def test_svident_inputs_of_a_gold_without_label_columns_are_refused() -> None:
    gold = b"sentence\tresearch_data\tdoc_id\tuuid\tlang\nA.\t\td1\tu1\ten\n"
    with pytest.raises(InvalidGold, match="is_variable, variable"):
        participant_inputs("svident-detection", gold)


def test_svident_row_of_the_wrong_width_is_refused() -> None:
    gold = SVIDENT_GOLD + b"Too short.\t0\n"
    with pytest.raises(InvalidGold, match="row 6"):
        participant_inputs("svident-detection", gold)


SCIER_DOC = {
    "doc_id": "p1",
    "doc_tokens": ["We", "use", "BERT", "."],
    "sentences": [["We", "use", "BERT", "."]],
    "ner": [[[2, 2, "Method"]]],
    "relations": [[]],
}


def test_scier_ere_inputs_hold_only_the_sentences() -> None:
    name, data = participant_inputs("scier-ere", to_bytes(SCIER_DOC, {**SCIER_DOC, "doc_id": "p2"}))
    assert name == "inputs.jsonl"
    assert json_lines(data) == [
        {"doc_id": "p1", "sentences": [["We", "use", "BERT", "."]]},
        {"doc_id": "p2", "sentences": [["We", "use", "BERT", "."]]},
    ]


def test_scier_re_inputs_add_the_gold_entities_but_no_relations() -> None:
    _, data = participant_inputs("scier-re", to_bytes(SCIER_DOC))
    assert json_lines(data) == [
        {"doc_id": "p1", "sentences": [["We", "use", "BERT", "."]], "ner": [[[2, 2, "Method"]]]}
    ]


def test_scier_line_without_sentences_is_refused() -> None:
    with pytest.raises(InvalidGold, match="line 1"):
        participant_inputs("scier-ere", to_bytes({"doc_id": "p1", "ner": []}))


def test_famus_cdae_inputs_name_the_frame_and_the_sorted_roles() -> None:
    gold = to_bytes(
        {
            "docid": "d1",
            "templates": [
                {"incident_type": "Arrest", "Suspect": [[["a man"]]], "Authorities": [], "template-spans": [1]}
            ],
        },
        {"docid": "d2", "templates": []},
    )
    name, data = participant_inputs("famus-cdae", gold)
    assert name == "inputs.jsonl"
    assert json_lines(data) == [
        {"docid": "d1", "incident_type": "Arrest", "roles": ["Authorities", "Suspect"]},
        {"docid": "d2", "incident_type": None, "roles": []},
    ]


def test_famus_cdae_document_with_two_frames_is_refused() -> None:
    gold = to_bytes({"docid": "d1", "templates": [{"incident_type": "Arrest"}, {"incident_type": "Hiring"}]})
    with pytest.raises(InvalidGold, match="Arrest, Hiring"):
        participant_inputs("famus-cdae", gold)


def test_famus_sv_inputs_drop_the_label_and_how_the_source_was_made() -> None:
    line = {
        "instance_id": "i1",
        "frame": "Arrest",
        "report_dict": {"doctext": "R ."},
        "source_dict": {"doctext": "S ."},
    }
    gold = to_bytes({**line, "valid_source": True, "bool_generated": False})
    name, data = participant_inputs("famus-sv", gold)
    assert name == "inputs.jsonl"
    assert json_lines(data) == [line]


@pytest.mark.parametrize("scorer", ["scier-ere", "famus-cdae", "famus-sv"])
def test_json_lines_gold_that_is_not_json_is_refused(scorer: str) -> None:
    with pytest.raises(InvalidGold):
        participant_inputs(scorer, b'{"doc_id": "p1", "sentences": [}\n')


def test_unknown_scorer_is_refused() -> None:
    with pytest.raises(UnknownScorer, match="no-such-scorer"):
        participant_inputs("no-such-scorer", SVIDENT_GOLD)


def test_every_seed_scorer_has_an_inputs_format() -> None:
    seeds = {"svident-detection", "svident-disambiguation", "scier-ere", "scier-re", "famus-cdae", "famus-sv"}
    assert set(input_formats()) == seeds
    assert seeds <= set(scorer_names())


# -- on the example data: no answers, ids one-to-one --------------------------------------------------

ANSWERS = {
    "svident-detection": {"is_variable", "variable"},
    "svident-disambiguation": {"is_variable", "variable"},
    "scier-ere": {"ner", "relations"},
    "scier-re": {"relations"},
    "famus-cdae": {"templates"},
    "famus-sv": {"valid_source", "bool_generated"},
}
ID_KEY = {"scier-ere": "doc_id", "scier-re": "doc_id", "famus-cdae": "docid", "famus-sv": "instance_id"}


def _gold_ids_and_fields(scorer: str, data: bytes) -> tuple[list[str], list[set[str]]]:
    if scorer.startswith("svident"):
        rows = read_tsv(data, InvalidGold)
        return [row[rows[0].index("uuid")] for row in rows[1:]], [set(rows[0])]
    lines = json_lines(data)
    return [line[ID_KEY[scorer]] for line in lines], [set(line) for line in lines]


@pytest.mark.parametrize(
    ("scorer", "gold"),
    [
        ("svident-detection", "svident/data/test.tsv"),
        ("svident-disambiguation", "svident/data/test.tsv"),
        ("scier-ere", "scier/data/test.jsonl"),
        ("scier-re", "scier/data/test_ood.jsonl"),
        ("famus-cdae", "famus/data/source-gold.jsonl"),
        ("famus-sv", "famus/data/sv-test.jsonl"),
    ],
)
def test_example_inputs_carry_no_answers_and_every_gold_id_once(scorer: str, gold: str) -> None:
    gold_bytes = (EXAMPLE_DATA / gold).read_bytes()
    _, data = participant_inputs(scorer, gold_bytes)
    gold_ids, _ = _gold_ids_and_fields(scorer, gold_bytes)
    input_ids, input_fields = _gold_ids_and_fields(scorer, data)
    assert input_ids == gold_ids
    assert len(set(input_ids)) == len(input_ids)
    for fields in input_fields:
        assert not fields & ANSWERS[scorer]


def test_inputs_are_utf8_text_with_a_final_newline() -> None:
    _, data = participant_inputs("famus-sv", (EXAMPLE_DATA / "famus/data/sv-dev.jsonl").read_bytes())
    assert data.decode("utf-8").endswith("\n")
    assert "Tromsø" in data.decode("utf-8")  # written as is, not as \\u escapes


# -- renamed ids ------------------------------------------------------------------------------------------


def test_renamed_ids_replace_every_id_and_order_the_lines_by_them() -> None:
    """The release sorts lines by answer; renamed, the lines follow the new ids and keep all else."""
    gold = to_bytes(
        {"instance_id": "report-1-source-2", "valid_source": False, "frame": "F"},
        {"instance_id": "report-3-source-3", "valid_source": False, "frame": "G"},
        {"instance_id": "EN-1-frame-F", "valid_source": True, "frame": "F"},
    )
    new = {"report-1-source-2": "c", "report-3-source-3": "a", "EN-1-frame-F": "b"}
    renamed = json_lines(rename_ids("famus-sv", gold, new.__getitem__))
    assert renamed == [
        {"instance_id": "a", "valid_source": False, "frame": "G"},
        {"instance_id": "b", "valid_source": True, "frame": "F"},
        {"instance_id": "c", "valid_source": False, "frame": "F"},
    ]
    assert [line["instance_id"] for line in json_lines(participant_inputs("famus-sv", to_bytes(*renamed))[1])] == [
        "a",
        "b",
        "c",
    ]


@pytest.mark.parametrize(("scorer", "key"), [("famus-cdae", "docid"), ("scier-ere", "doc_id"), ("scier-re", "doc_id")])
def test_renamed_ids_of_the_other_json_lines_formats(scorer: str, key: str) -> None:
    gold = to_bytes({key: "d2", "x": 2}, {key: "d1", "x": 1})
    assert json_lines(rename_ids(scorer, gold, lambda old: f"new-{old}")) == [
        {key: "new-d1", "x": 1},
        {key: "new-d2", "x": 2},
    ]
    assert set(renamable_formats()) >= {scorer}


def test_two_ids_renamed_alike_are_refused() -> None:
    gold = to_bytes({"instance_id": "a", "valid_source": True}, {"instance_id": "b", "valid_source": False})
    with pytest.raises(InvalidGold) as refused:
        rename_ids("famus-sv", gold, lambda old: "same")
    assert str(refused.value.problems[0]) == "line 2: its instance_id is given to an earlier line too"


def test_a_format_without_renamable_ids_is_refused() -> None:
    with pytest.raises(UnknownScorer, match="cannot be renamed"):
        rename_ids("svident-detection", SVIDENT_GOLD, str.upper)
