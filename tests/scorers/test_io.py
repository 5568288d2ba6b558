"""Reading files by SCORING.md's general rules, and unpacking zipped submissions safely."""

from __future__ import annotations

import contextlib
import io
import json
import stat
import struct
import zipfile
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers.errors import InvalidGold, InvalidSubmission, Problem, Problems, ValidationError
from scorers.io import (
    decode_text,
    iter_json_lines,
    iter_json_object,
    iter_tsv,
    load_json,
    read_tsv,
    unpack_submission,
)
from scorers.io import json_object as scorers_json_object


def _zip(entries: dict[str, bytes], *, symlink: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def test_byte_order_mark_is_dropped_and_crlf_lines_read() -> None:
    data = b"\xef\xbb\xbf" + b'{"a": 1}\r\n\r\n  \n{"b": 2}'
    problems = Problems(InvalidSubmission)
    assert list(iter_json_lines(data, problems)) == [(1, {"a": 1}), (4, {"b": 2})]
    assert not problems


def test_text_that_is_not_utf8_is_refused_with_its_line() -> None:
    with pytest.raises(InvalidSubmission) as caught:
        decode_text(b'{"a": 1}\n{"b": "\xff"}')
    assert "line 2" in str(caught.value)
    assert "UTF-8" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"a": 1, "a": 2}', "key 'a' appears more than once"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": Infinity}', "Infinity is not a JSON number"),
        ('{"a": 1e999}', "overflows to infinity"),
        ('{"a": ', "line 1, column 7: not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("", "the file is empty"),
    ],
)
def test_strict_json_refusals_name_the_problem(text: str, fragment: str) -> None:
    with pytest.raises(InvalidSubmission) as caught:
        load_json(text.encode())
    assert fragment in str(caught.value)


def test_bad_lines_are_collected_with_their_numbers_and_counted_past_twenty() -> None:
    data = b"\n".join([b"{bad"] * 25 + [b'{"ok": true}'])
    problems = Problems(InvalidSubmission)
    values = list(iter_json_lines(data, problems))
    assert values == [(26, {"ok": True})]
    error = problems.error()
    assert error.total == 25
    assert len(error.problems) == 20
    assert error.problems[0].where == "line 1"
    assert str(error).endswith("... and 5 more")


def test_json_lines_are_parsed_one_at_a_time() -> None:
    # Line 1 is handed over before line 3 is read, so a caller holds one parsed line at a time.
    problems = Problems(InvalidSubmission)
    lines = iter_json_lines(b'{"a": 1}\n\n{bad\n[2]\n', problems)
    assert next(lines) == (1, {"a": 1})
    assert not problems
    assert list(lines) == [(4, [2])]
    assert [(p.where, p.message) for p in problems.error().problems] == [
        ("line 3", "column 2: not valid JSON (Expecting property name enclosed in double quotes)")
    ]


def test_json_lines_not_utf8_are_refused_with_line_and_byte_after_the_byte_order_mark() -> None:
    # After the mark: '{"a": 1}\n' is bytes 0-8, '{"b": "' bytes 9-15, so the bad byte is byte 16 of line 2.
    data = b'\xef\xbb\xbf{"a": 1}\n{"b": "\xff"}\n'
    with pytest.raises(InvalidSubmission) as caught:
        list(iter_json_lines(data, Problems(InvalidSubmission)))
    assert [(p.where, p.message) for p in caught.value.problems] == [
        ("line 2, byte 16", "is not UTF-8 text (save the file as UTF-8)")
    ]
    with pytest.raises(InvalidSubmission) as whole:
        decode_text(data)
    assert whole.value.problems == caught.value.problems


@pytest.mark.parametrize(
    ("data", "where", "message"),
    [
        # A byte-order mark counts only at the start of the file; json.loads names it elsewhere.
        (b'{"a": 1}\n\xef\xbb\xbf{"b": 2}', "line 2", "column 1: not valid JSON (Unexpected UTF-8 BOM"),
        (b'{"a": 1, "a": 2}', "line 1", "key 'a' appears more than once in one object"),
        (b'{"a": 1}\r\n{"a": NaN}\r\n', "line 2", "NaN is not a JSON number"),
    ],
)
def test_json_lines_problems_name_their_line(data: bytes, where: str, message: str) -> None:
    problems = Problems(InvalidSubmission)
    list(iter_json_lines(data, problems))
    (problem,) = problems.error().problems
    assert problem.where == where
    assert problem.message.startswith(message)


@pytest.mark.parametrize("data", [b"", b"\xef\xbb\xbf", b"\n \r\n\t\n", "\u00a0\n\u2028".encode()])
def test_json_lines_of_white_space_only_are_an_empty_file(data: bytes) -> None:
    with pytest.raises(InvalidGold, match="the file is empty"):
        list(iter_json_lines(data, Problems(InvalidGold), InvalidGold))


def _not_object(value: Any) -> InvalidSubmission:
    return InvalidSubmission([Problem("top level", f"not an object: {value!r}")])


def _whole(data: bytes) -> tuple[str, Any]:
    """What load_json makes of a file: its members, the value that is not an object, or the refusal."""
    try:
        value = load_json(data)
    except InvalidSubmission as exc:
        return "refused", exc.problems
    if not isinstance(value, dict):
        return "refused", _not_object(value).problems
    return "members", list(value.items())


def _streamed(data: bytes, positions: dict[str, int] | None = None) -> tuple[str, Any]:
    """The same from iter_json_object, member by member."""
    try:
        return "members", list(iter_json_object(data, _not_object, positions=positions))
    except InvalidSubmission as exc:
        return "refused", exc.problems


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (' \r\n{ "a" : [1, {"b": null}] ,"c":{}}\n', ("members", [("a", [1, {"b": None}]), ("c", {})])),
        ("{}", ("members", [])),
        # The top-level repeat is found when the object closes, so a later syntax error comes first...
        ('{"a": 1, "a": 2, "b": }', ("refused", "line 1, column 23: not valid JSON (Expecting value)")),
        # ... and a repeat inside a later member, whose object closes first.
        ('{"a": 1, "a": 2, "b": {"c": 1, "c": 2}}', ("refused", "key 'c' appears more than once in one object")),
        ('{"a": 1, "a": 2} x', ("refused", "key 'a' appears more than once in one object")),
        ('{"a": 1} x', ("refused", "line 1, column 10: not valid JSON (Extra data)")),
        ('{"a": 1,}', ("refused", "line 1, column 9: not valid JSON (Expecting property name enclosed in double")),
        ('{"a" 1}', ("refused", "line 1, column 6: not valid JSON (Expecting ':' delimiter)")),
        ('{"a": 1\n "b": 2}', ("refused", "line 2, column 2: not valid JSON (Expecting ',' delimiter)")),
        ('{"a": NaN}', ("refused", "NaN is not a JSON number")),
        ('{"a\\x": 1}', ("refused", "line 1, column 4: not valid JSON (Invalid \\escape")),
        ('["a"]', ("refused", "not an object: ['a']")),
        ("\ufeff\ufeff{}", ("refused", "line 1, column 1: not valid JSON (Unexpected UTF-8 BOM")),
        (" \n", ("refused", "the file is empty; expected a JSON document")),
    ],
)
def test_json_object_members_are_read_as_load_json_reads_them(text: str, expected: tuple[str, Any]) -> None:
    data = text.encode()
    streamed = _streamed(data)
    assert streamed == _whole(data)
    kind, detail = expected
    if kind == "members":
        assert streamed == expected
    else:
        assert streamed[0] == "refused"
        assert str(streamed[1][0].message).startswith(detail)


def test_json_object_members_are_handed_over_one_at_a_time() -> None:
    members = iter_json_object(b'{"a": [1], "b": }', _not_object)
    assert next(members) == ("a", [1])  # before the syntax error after it is read
    with pytest.raises(InvalidSubmission, match="column 17: not valid JSON"):
        next(members)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=8,
)


JSON_PIECES = st.sampled_from(
    ["{", "}", "[", "]", '"', ":", ",", " ", "\n", "1", "-", ".5", "e9", "null", "NaN", '"k"']
)


@st.composite
def json_object_texts(draw: st.DrawFn) -> bytes:
    """A JSON object's text (keys of one letter of three, so some repeat), now and then edited: a piece of JSON
    inserted or a character dropped; white space, a byte-order mark or text around it."""
    members = draw(st.lists(st.tuples(st.sampled_from("abc"), JSON_VALUES), max_size=4))
    text = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in members) + "}"
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["insert", "drop", "nothing"]))
        if edit == "insert":
            text = text[:at] + draw(JSON_PIECES) + text[at:]
        elif edit == "drop":
            text = text[:at] + text[at + 1 :]
    return (
        draw(st.sampled_from(["", " ", "\ufeff", "\n\t"])) + text + draw(st.sampled_from(["", "\n", " x"]))
    ).encode()


@settings(max_examples=300, deadline=None)
@given(st.one_of(json_object_texts(), st.text(alphabet='{}[]":, \n1aNe\\', max_size=30).map(str.encode)))
def test_json_object_members_and_refusals_equal_those_of_load_json(data: bytes) -> None:
    assert _streamed(data) == _whole(data)


@st.composite
def json_object_bytes(draw: st.DrawFn) -> bytes:
    """As ``json_object_texts``, now and then with a byte that is not ASCII put in: UTF-8 or not."""
    data = draw(json_object_texts())
    at = draw(st.integers(0, len(data)))
    return data[:at] + draw(st.sampled_from([b"", "\u00e9".encode(), b"\xff"])) + data[at:]


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(json_object_bytes(), st.text(alphabet='{}[]":, \n1aNe\\', max_size=30).map(str.encode)),
    st.integers(1, 12),
)
def test_json_object_read_in_windows_equals_load_json(data: bytes, window: int) -> None:
    # The windows of ASCII text a large file is read in, made a few characters wide: members cut anywhere.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scorers_json_object, "JSON_OBJECT_WINDOW", window)
        assert _streamed(data) == _whole(data)


@settings(max_examples=300, deadline=None)
@given(
    json_object_bytes(),
    st.sampled_from([{}, {"a": 0}, {"b": 0, "a": 1}, {"a": 0, "b": 1, "c": 2}]),
    st.sampled_from([4, 1 << 20]),
)
def test_keys_checked_by_their_position_are_refused_as_the_set_refuses_them(
    data: bytes, positions: dict[str, int], window: int
) -> None:
    """Keys a caller expects are checked for repeats by their index, the others in a set: the same members, and
    the same refusal naming the first key repeated, whichever way each key is checked."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scorers_json_object, "JSON_OBJECT_WINDOW", window)
        assert _streamed(data, positions) == _whole(data)


def test_a_repeated_key_among_those_expected_is_named_even_after_an_unexpected_one() -> None:
    data = b'{"x": 1, "a": 2, "x": 3, "a": 4}'
    for positions in (None, {"a": 0}, {"x": 0}, {"a": 1, "x": 0}):
        refused = _streamed(data, positions)
        assert refused[0] == "refused", positions
        assert refused[1][0].message == "key 'x' appears more than once in one object", positions


def test_json_object_in_windows_never_holds_the_whole_text() -> None:
    members = [f'"q{k}": {{"v{k}": {k}.5, "w": -{k}}}' for k in range(200)]
    data = ("{" + ",\n ".join(members) + "}\n").encode()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scorers_json_object, "JSON_OBJECT_WINDOW", 64)
        patch.setattr(scorers_json_object, "decode_text", None)  # the whole text is decoded only to refuse or read on
        assert list(iter_json_object(data, _not_object)) == list(json.loads(data).items())


def test_tsv_keeps_quoted_tabs_and_newlines() -> None:
    data = b'a\tb\n"x\ty"\t"line1\nline2 ""q"""\n'
    assert read_tsv(data, InvalidGold) == [["a", "b"], ["x\ty", 'line1\nline2 "q"']]


def test_tsv_rows_come_with_the_line_they_start_on() -> None:
    data = b'\xef\xbb\xbfa\tb\n\n"x\ny"\tz\nlast\trow'
    assert list(iter_tsv(data, InvalidGold)) == [(1, ["a", "b"]), (3, ["x\ny", "z"]), (5, ["last", "row"])]


def test_tsv_not_utf8_is_refused_with_its_line_even_past_the_first_chunk_read() -> None:
    # 20,000 rows of 4 bytes, then a bad byte: the decoder meets it chunks ahead of the reader's row.
    data = b"a\tb\n" * 20_000 + b"c\t\xff\n"
    with pytest.raises(InvalidGold) as caught:
        read_tsv(data, InvalidGold)
    assert [(p.where, p.message) for p in caught.value.problems] == [
        ("line 20001, byte 80002", "is not UTF-8 text (save the file as UTF-8)")
    ]


@pytest.mark.parametrize(("data", "where"), [(b'a\tb\n"x\ty"z\tw\n', "line 2"), (b'a\n"open\n\nfield', "line 4")])
def test_tsv_quoting_errors_name_their_line(data: bytes, where: str) -> None:
    with pytest.raises(InvalidGold) as caught:
        read_tsv(data, InvalidGold)
    (problem,) = caught.value.problems
    assert problem.where == where
    assert problem.message.startswith("not a valid TSV row")


def test_a_bare_file_is_returned_as_it_is() -> None:
    assert unpack_submission(b"{}") == (b"{}", None)


def test_zip_with_one_file_and_archiver_junk_is_unpacked() -> None:
    data = _zip({"out/": b"", "out/submission.json": b'{"x": 1}', "__MACOSX/._submission.json": b"junk"})
    assert unpack_submission(data) == (b'{"x": 1}', "out/submission.json")


@pytest.mark.parametrize(
    ("entries", "fragment"),
    [
        ({}, "holds 0 files"),
        ({"a.json": b"{}", "b.json": b"{}"}, "exactly one submission file; it holds 2 files"),
        ({"../evil.json": b"{}"}, "'..' path component"),
        ({"/abs.json": b"{}"}, "absolute"),
        ({f"f{i}.json": b"" for i in range(70)}, "holds 70 entries"),
    ],
)
def test_zip_refusals(entries: dict[str, bytes], fragment: str) -> None:
    with pytest.raises(InvalidSubmission) as caught:
        unpack_submission(_zip(entries))
    assert fragment in str(caught.value)


def test_zip_with_a_link_is_refused() -> None:
    with pytest.raises(InvalidSubmission, match="symbolic link"):
        unpack_submission(_zip({"submission.json": b"{}"}, symlink="link.json"))


def test_zip_bomb_is_stopped_at_the_bound() -> None:
    bomb = _zip({"submission.json": b"0" * 5_000_000})
    assert len(bomb) < 50_000
    with pytest.raises(InvalidSubmission, match="limit is 1000000"):
        unpack_submission(bomb, max_bytes=1_000_000)


def test_zip_whose_header_lies_about_its_size_is_still_bounded() -> None:
    bomb = bytearray(_zip({"submission.json": b"0" * 2_000_000}))
    # Patch the declared uncompressed size in the central directory to 10 bytes: the reader
    # must count what it really inflates rather than trust the header.
    central = bomb.rfind(b"PK\x01\x02")
    bomb[central + 24 : central + 28] = (10).to_bytes(4, "little")
    with pytest.raises(InvalidSubmission) as caught:
        unpack_submission(bytes(bomb), max_bytes=1_000_000)
    assert "zip archive" in str(caught.value)


def test_truncated_zip_is_refused_not_crashed() -> None:
    data = _zip({"submission.json": b'{"x": 1}' * 100})
    with pytest.raises(InvalidSubmission, match="zip archive"):
        unpack_submission(data[: len(data) // 2])


@given(st.binary(max_size=2048))
def test_arbitrary_bytes_never_raise_anything_but_a_refusal(data: bytes) -> None:
    for call in (
        lambda: load_json(data),
        lambda: list(iter_json_lines(data, Problems(InvalidSubmission))),
        lambda: read_tsv(data, InvalidGold),
        lambda: unpack_submission(b"PK\x03\x04" + data),
    ):
        with contextlib.suppress(ValidationError):
            call()


def test_collector_is_paused_only_while_parsing_and_restored_after_errors() -> None:
    import gc

    from scorers.io import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(InvalidSubmission):
        load_json(b'{"a": 1, "a": 2}')
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # it was off before, so it stays off
    finally:
        gc.enable()


def test_a_zip_entry_without_a_name_is_refused() -> None:
    # zipfile cannot write such an entry, so the archive is laid out by hand: one stored entry, name length 0.
    content, crc = b"{}", zlib.crc32(b"{}")
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, crc, len(content), len(content), 0, 0)
    central = struct.pack(
        "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, crc, len(content), len(content), 0, 0, 0, 0, 0, 0, 0
    )
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local) + len(content), 0)
    with pytest.raises(InvalidSubmission, match="an empty name"):
        unpack_submission(local + content + central + end)
