"""Reading files by SCORING.md's general rules, and unpacking zipped submissions safely."""

from __future__ import annotations

import contextlib
import io
import stat
import zipfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorers.errors import InvalidGold, InvalidSubmission, Problems, ValidationError
from scorers.io import decode_text, iter_json_lines, load_json, read_tsv, unpack_submission


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


def test_tsv_keeps_quoted_tabs_and_newlines() -> None:
    data = b'a\tb\n"x\ty"\t"line1\nline2 ""q"""\n'
    assert read_tsv(data, InvalidGold) == [["a", "b"], ["x\ty", 'line1\nline2 "q"']]


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
