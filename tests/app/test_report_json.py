"""``report_json`` writes what ``json.dumps(value, ensure_ascii=False)`` writes, for every value, and each of its
checks of orjson's text is needed: without any one of them some value is written differently."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.cli import report_json as report_json_module
from app.cli.report_json import SIGNS, report_json, report_json_parts

#: Characters that JSON's strings escape or that the checks look for, beside any character at all (lone
#: surrogates included, which orjson refuses and ``json.dumps`` writes).
_TRICKY = st.sampled_from([",", ":", '"', "\\", "e", "-", "0", ".", "1", "n", "u", "l", " ", "\x00", "\x1f",
                           "\x7f", "\n", "\t", "é", "\u2028", "\U0001f600", "\ud800"])  # fmt: skip
_TEXT = st.one_of(st.text(st.one_of(_TRICKY, st.characters(codec=None)), max_size=8), st.just("null"))
_TINY = st.builds(lambda m, e: m * 10.0**e, st.floats(-9.99, 9.99), st.integers(-330, -3))
_FLOATS = st.one_of(st.floats(), _TINY, st.sampled_from([0.0, -0.0, 1e-4, 9.999999999999999e-05, 1e16, 1e15, 5e-324]))
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-(2**65), 2**65), _FLOATS, _TEXT)
#: Keys as reports hold them (strings), with now and then one that ``json.dumps`` turns into a string.
_KEYS = st.one_of(_TEXT, _TEXT, _TEXT, st.integers(), st.floats(), st.booleans(), st.none())
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(_KEYS, inner, max_size=5)),
    max_leaves=25,
)


def _dumps(value: Any) -> str | type[Exception]:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        return type(exc)


def _written(value: Any, **kwargs: Any) -> str | type[Exception]:
    try:
        return report_json(value, **kwargs)
    except (TypeError, ValueError) as exc:
        return type(exc)


def _in_parts(value: Any, part: int) -> str | type[Exception]:
    try:
        return "".join(report_json_parts(value, part=part))
    except (TypeError, ValueError) as exc:
        return type(exc)


@settings(max_examples=1500, deadline=None)
@given(_VALUES, st.integers(1, 64))
@example({"scorer": "s", "metrics": {"a": 0.5, "b": 1e-05, "c": -0.0}, "breakdown": {"x,y": {"z:": [1, 2]}}}, 3)
@example({'a":"b': 1}, 1)
@example([float("nan"), float("inf"), -float("inf"), None], 2)
@example({"é😀": ["\u2028\x7f", 0.25]}, 1)
def test_the_same_characters_as_json_dumps(value: Any, part: int) -> None:
    """Whole, and in parts of ``part`` bytes (which may end inside a character)."""
    expected = _dumps(value)
    assert _written(value) == expected
    assert _in_parts(value, part) == expected


@settings(max_examples=800, deadline=None)
@given(_VALUES, st.integers(1, 64), st.integers(1, 3))
@example({"scorer": "s", "breakdown": {"document": {"d1": {"f1": 0.5}, "d2": {"f1": 1e-05}, "d3": {}}}}, 5, 1)
@example({"a": {"b": {"c": 1, "d": 2}, 1: 2}}, 3, 1)
def test_large_dictionaries_written_a_group_of_members_at_a_time(value: Any, part: int, group: int) -> None:
    """A report's compact text is made in pieces (members, groups of ``GROUP`` members) so that its whole text is
    never held: with groups of 1 to 3 members, every dictionary is cut, and the text is still ``json.dumps``'s."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report_json_module, "GROUP", group)
        assert _in_parts(value, part) == _dumps(value)


def test_a_large_report_s_text_is_made_a_group_of_rows_at_a_time() -> None:
    """The per-document table of a large report is given to orjson ``GROUP`` rows at a time, not whole."""
    rows = {f"doc-{k}": {"f1": k / 7, "p": 1.0} for k in range(3 * report_json_module.GROUP + 5)}
    report = {"scorer": "s", "metrics": {"f1": 0.5}, "breakdown": {"document": rows}}
    pieces = list(report_json_module._compact_pieces(report))
    assert b"".join(pieces) == orjson.dumps(report)
    assert max(map(len, pieces)) < len(orjson.dumps(rows)) / 2  # four groups of rows
    assert report_json(report) == json.dumps(report, ensure_ascii=False)


def test_a_report_of_ordinary_values_takes_orjson_s_text() -> None:
    report = {"scorer": "t", "metrics": {"f1": 0.5, "n": 3}, "breakdown": {"doc-1": {"f1": 1e16, "p": 0.0001}}}
    assert report_json(report, signs=()) == json.dumps(report, ensure_ascii=False)


def test_values_json_dumps_refuses_are_refused() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular reference"):
        report_json({"a": cycle})
    with pytest.raises(TypeError):
        report_json({"a": {1, 2}})


#: For each check, a value that orjson's text, spaced, writes otherwise than ``json.dumps`` when that check alone is
#: left out. Chosen by hand: a Hypothesis search over short values finds one for each as well, but took up to 20 s of
#: CPU for a check; a fixed value shows the same every time, at once.
WITNESSES: dict[str, Any] = {
    "null": [1.0, float("nan")],  # orjson: null; json.dumps: NaN
    "float in [1e-5, 1e-4)": {"p": 5e-05},  # 0.00005 against 5e-05
    "float below 1e-5": [1.5e-07],  # 1.5e-7 against 1.5e-07
    "quote in a string": {'":"': 1},  # the escaped quotes pair up: the colon looks outside any string
    "comma or colon in a string": ["a,b"],
}


def test_every_check_has_a_witness() -> None:
    assert set(WITNESSES) == set(SIGNS)


@pytest.mark.parametrize("left_out", list(SIGNS))
def test_each_check_is_needed(left_out: str) -> None:
    witness = WITNESSES[left_out]
    signs = [sign for name, sign in SIGNS.items() if name != left_out]
    assert _written(witness) == _dumps(witness)
    assert _written(witness, signs=signs) != _dumps(witness)
    # Each other check alone left out, this value is still written right: it needs this check in particular.
    for other in SIGNS:
        if other != left_out:
            kept = [sign for name, sign in SIGNS.items() if name != other]
            assert _written(witness, signs=kept) == _dumps(witness), other


def test_a_tiny_float_is_seen_wherever_it_falls_among_the_pieces_searched() -> None:
    """The check for a float below 1e-5 reads a large text piece by piece (no copy of the whole text held): a
    ``7e-`` across the end of a piece, at the text's start or end, is found as in the whole text."""
    piece = report_json_module._PIECE
    for size in (piece - 1, piece, piece + 1, piece + 2, 2 * piece + 3):
        for at in {0, piece - 3, piece - 2, piece - 1, piece, size - 3}:
            text = bytearray(b"x" * size)
            text[at : at + 3] = b"7e-"
            assert SIGNS["float below 1e-5"](bytes(text)), (size, at)
            text[at] = ord("a")  # a letter before "e-": no float
            assert not SIGNS["float below 1e-5"](bytes(text)), (size, at)
    assert not SIGNS["float below 1e-5"](b"") and not SIGNS["float below 1e-5"](b"e-")


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False), _TINY))
def test_orjson_writes_floats_as_repr_but_below_1e_4_where_the_checks_see_it(number: float) -> None:
    text = orjson.dumps(number)
    if number == 0 or abs(number) >= 1e-4:
        assert text == repr(number).encode()
    else:
        assert SIGNS["float in [1e-5, 1e-4)"](text) or SIGNS["float below 1e-5"](text)


def test_floats_at_each_power_of_ten_and_around_it() -> None:
    for exponent in range(-323, 309):
        for number in (10.0**exponent, math.nextafter(10.0**exponent, 0), math.nextafter(10.0**exponent, math.inf)):
            if math.isinf(number):
                continue
            text = orjson.dumps(number)
            if number >= 1e-4:
                assert text == repr(number).encode(), number
            else:
                assert SIGNS["float in [1e-5, 1e-4)"](text) or SIGNS["float below 1e-5"](text), number
    assert orjson.dumps(sys.float_info.max) == repr(sys.float_info.max).encode()
