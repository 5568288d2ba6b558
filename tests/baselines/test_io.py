"""Reading task files for baselines: which file is the input, and errors that name the file and place."""

from __future__ import annotations

import json

import pytest

from baselines import InvalidInputs
from baselines.io import dump_json, dump_json_lines, first_line, json_objects, pick_file, tsv_records


def test_the_only_file_with_the_suffix_is_picked() -> None:
    assert pick_file({"README.md": b"x", "data.tsv": b"y"}, "public inputs", (".tsv",)) == ("data.tsv", b"y")


def test_among_several_the_one_that_looks_right_then_the_one_named_inputs_wins() -> None:
    files = {"documents.jsonl": b'{"instance_id": 1}', "inputs.jsonl": b'{"docid": 1}', "x.jsonl": b'{"docid": 2}'}
    assert pick_file(files, "inputs", (".jsonl",))[0] == "inputs.jsonl"
    looks = {"documents.jsonl": b'{"instance_id": 1}', "mine.jsonl": b'{"docid": 1}'}
    assert pick_file(looks, "inputs", (".jsonl",), lambda data: b"docid" in data)[0] == "mine.jsonl"


def test_no_fitting_file_or_an_ambiguous_choice_is_refused_with_the_file_names() -> None:
    with pytest.raises(InvalidInputs) as caught:
        pick_file({"notes.txt": b""}, "public inputs", (".tsv",))
    assert str(caught.value) == (
        "expected exactly one .tsv file among the public inputs (or one named inputs.tsv); found none "
        "(files: 'notes.txt')"
    )
    with pytest.raises(InvalidInputs, match=r"found several: 'a.tsv', 'b.tsv'"):
        pick_file({"a.tsv": b"", "b.tsv": b""}, "public inputs", (".tsv",))


def test_tsv_records_follow_the_header_and_keep_quoted_tabs() -> None:
    header, rows = tsv_records("f", b'a\tb\r\n"x\ty"\t2\n')
    assert header == ["a", "b"]
    assert rows == [{"a": "x\ty", "b": "2"}]


def test_tsv_rows_of_the_wrong_width_or_bad_bytes_are_refused_by_row() -> None:
    with pytest.raises(InvalidInputs, match=r"^input file 'x.tsv', row 3: has 1 fields; the header has 2$"):
        tsv_records("input file 'x.tsv'", b"a\tb\n1\t2\n3\n")
    with pytest.raises(InvalidInputs, match=r"f: line 1, byte 2: is not UTF-8 text"):
        tsv_records("f", b"ab\xff\n")
    with pytest.raises(InvalidInputs, match=r"the file is empty"):
        tsv_records("f", b"")


def test_json_lines_must_be_objects_with_the_required_keys() -> None:
    assert json_objects("f", b'{"a": 1}\n\n{"a": 2}\n', ("a",)) == [(1, {"a": 1}), (3, {"a": 2})]
    with pytest.raises(InvalidInputs, match=r"^f, line 2: expected a JSON object, found list$"):
        json_objects("f", b'{"a": 1}\n[1]\n')
    with pytest.raises(InvalidInputs, match=r"^f, line 1: missing key\(s\) b, c$"):
        json_objects("f", b'{"a": 1}\n', ("a", "b", "c"))
    with pytest.raises(InvalidInputs, match=r"^f: line 2: "):
        json_objects("f", b'{"a": 1}\n{"a": \n')


def test_first_line_skips_a_byte_order_mark_and_blank_lines() -> None:
    assert first_line(b'\xef\xbb\xbf\n\n{"a": 1}\n{"b": 2}') == b'{"a": 1}'
    assert first_line(b"") == b""


def test_submissions_are_compact_utf8_in_the_given_key_order() -> None:
    assert dump_json({"b": "ü", "a": [1, 2.5]}) == '{"b":"ü","a":[1,2.5]}\n'.encode()
    assert dump_json_lines([{"x": 1}, {"y": 2}]) == b'{"x":1}\n{"y":2}\n'
    assert json.loads(dump_json({"k": 0.1})) == {"k": 0.1}
