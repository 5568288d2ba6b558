"""JSON Lines read by orjson (``plain_lines``) against the strict reader (``iter_json_lines``): where the fast reader
vouches for a file, every line's value is the strict reader's, types and all; a file with a repeated key, an escaped
colon, NaN, an overflowing number, a lone surrogate, nesting past the standard library's limit or no line at all is
left to the strict reader (``Unsure``). FAMuS CDAE gold read either way gives the same gold and the same refusals."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers.errors import InvalidGold, Problems
from scorers.io import iter_json_lines
from scorers.io.plain_json import Unsure, plain_lines
from scorers.tasks.famus_gold import _read_gold, parse_cdae_gold
from scorers.tasks.famus_limits import DEFAULT_LIMITS

KEYS = st.sampled_from(["a", "b", "c", 'q"', "x:y", "\u00e9", "\\", "::"])
SCALARS = st.one_of(
    st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([True, False, None, "s", "", "10:30", "a : b", "\u00fc"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.lists(st.tuples(KEYS, inner), max_size=4)),
    max_leaves=12,
)


def _text(value: Any, separator: str) -> str:
    """JSON text of ``value``, where a list of (key, value) pairs is an object written with its repeats."""
    if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
        return "{" + ",".join(json.dumps(k) + separator + _text(v, separator) for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_text(v, separator) for v in value) + "]"
    return json.dumps(value)


def _strict(data: bytes) -> tuple[list[tuple[int, Any]], list[Any]]:
    problems = Problems(InvalidGold)
    try:
        lines = list(iter_json_lines(data, problems, InvalidGold))
    except InvalidGold as exc:
        return [], list(exc.problems)
    return lines, list(problems.listed)


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a) == json.dumps(b) and repr(a) == repr(b)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(VALUES, st.sampled_from([":", " : ", ":\t"])), max_size=5), st.booleans(), st.booleans())
def test_where_the_fast_reader_vouches_it_reads_what_the_strict_reader_reads(
    lines: list[tuple[Any, str]], blank: bool, crlf: bool
) -> None:
    end = "\r\n" if crlf else "\n"
    text = end.join(_text(value, separator) for value, separator in lines)
    if blank:
        text = "\n  \n" + text + "\n\n"
    data = text.encode()
    strict, problems = _strict(data)
    try:
        fast = list(plain_lines(data))
    except Unsure:
        return
    assert not problems
    assert [n for n, _ in fast] == [n for n, _ in strict]
    assert all(_same(a, b) for (_, a), (_, b) in zip(fast, strict, strict=True))


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}\n{"a": 1, "a": 2}',
        '{"a": {"b": 1, "b": 2}}',
        '[{"x": 1, "x": 1}]',
        '{"a": "\\u003a", "b": 1, "b": 2}',  # an escaped colon would hide the repeat from the count
        '{"a": NaN}',
        '{"a": 1e999}',
        '{"a": "\\ud800"}',
        '{"a": 1} {"b": 2}',
        "[" * 600 + "]" * 600,
        "",
        "\n \n",
        '{"a": 1}\x1c',
    ],
)
def test_what_it_cannot_vouch_for_is_left_to_the_strict_reader(text: str) -> None:
    with pytest.raises(Unsure):
        list(plain_lines(text.encode()))


def test_a_byte_order_mark_blank_lines_and_crlf_are_read_as_the_strict_reader_reads_them() -> None:
    data = b'\xef\xbb\xbf{"a": "10:30"}\r\n\n  \n{"b": [1, {"c": 2}]}\r\n'
    assert list(plain_lines(data)) == _strict(data)[0] == [(1, {"a": "10:30"}), (4, {"b": [1, {"c": 2}]})]


GOLD = (
    b'{"docid": "d1", "templates": [{"incident_type": "F", "Place": [[["in the city"]]], "Time": [[["10:30", 3]]]}]}\n'
    b'{"docid": "d2", "templates": [{"incident_type": "G", "template-spans": [[1, 2]], "Agent": []}]}\n'
)


def test_famus_gold_is_the_same_read_fast_or_strictly() -> None:
    fast = _read_gold(lambda problems: plain_lines(GOLD), DEFAULT_LIMITS)
    strict = _read_gold(lambda problems: iter_json_lines(GOLD, problems, InvalidGold), DEFAULT_LIMITS)
    assert fast == strict == parse_cdae_gold(GOLD)
    assert fast.largest_role == strict.largest_role and fast.tokens.ids == strict.tokens.ids


@pytest.mark.parametrize(
    ("line", "where", "message"),
    [
        (b'{"docid": "d3", "docid": "d4", "templates": []}', "line 3", "key 'docid' appears more than once"),
        (b'{"docid": "d3", "templates": [{"incident_type": "F", "R": [[["x", 1e999]]]}]}', "line 3", "too large"),
        (b'{"docid": "d3", "templates": [18446744073709551616]}', "line 3, templates[0]", "18446744073709551616"),
        (b'{"docid": "d1", "templates": []}', "line 3", 'docid "d1" appears more than once'),
    ],
)
def test_famus_gold_refusals_are_worded_from_the_strict_reader(line: bytes, where: str, message: str) -> None:
    with pytest.raises(InvalidGold) as refused:
        parse_cdae_gold(GOLD + line)
    (problem,) = refused.value.problems
    assert problem.where == where and message in problem.message
