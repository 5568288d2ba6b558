"""The readers' fast path (``plain_loads``: orjson where it gives what the strict decoder gives) against the strict
decoder: where the fast path answers, its value is the strict decoder's, types and all; a text with a repeated key,
an integer past 64 bits, NaN, an overflowing number or nesting past the standard library's limit is left to the
strict decoder, which refuses it or reads it as before."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers.errors import InvalidSubmission
from scorers.io import iter_json_object, load_json
from scorers.io.json_object import KeyBound
from scorers.io.strict_json import MISSING, plain_loads, strict_decoder

KEYS = st.sampled_from(["a", "b", "c", 'q"', "x:y", "\u00e9", "\\"])
SCALARS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([2**63, -(2**63), 2**64 - 1, 2**64, 1e300, 9.3e18, -9.3e18, True, False, None, "s", ""]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.lists(st.tuples(KEYS, inner), max_size=4)),
    max_leaves=12,
)


def _text(value: Any, spaced: bool) -> str:
    """JSON text of ``value``, where a list of (key, value) pairs is an object written with its repeats."""
    separator = " : " if spaced else ":"
    if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
        return "{" + ",".join(json.dumps(k) + separator + _text(v, spaced) for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_text(v, spaced) for v in value) + "]"
    return json.dumps(value)


def _strict(text: str) -> Any:
    try:
        return strict_decoder(finite=False).decode(text)
    except (ValueError, RecursionError) as exc:
        return type(exc)


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a) == json.dumps(b) and repr(a) == repr(b)


@settings(max_examples=600, deadline=None)
@given(VALUES, st.booleans(), st.booleans())
def test_where_the_fast_path_answers_it_is_the_strict_decoder(value: Any, as_object: bool, spaced: bool) -> None:
    text = _text([("k", value)] if as_object else value, spaced)
    fast = plain_loads(text)
    strict = _strict(text)
    if fast is not MISSING:
        assert _same(fast, strict)
        assert _same(plain_loads(text.encode()), strict)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"a": {"b": 1, "b": 2}}',
        '[{"a": 1, "a": 1}]',
        '{"a": 123456789012345678901234567890}',
        '{"a": -9223372036854775809}',
        '{"a": NaN}',
        '{"a": 1e999}',
        '{"a": "\\ud800"}',
        "[" * 600 + "]" * 600,
    ],
)
def test_what_orjson_reads_otherwise_is_left_to_the_strict_decoder(text: str) -> None:
    assert plain_loads(text) is MISSING


def test_a_flat_object_is_read_fast_and_its_repeats_refused_as_before() -> None:
    assert plain_loads('{"v1": 0.5, "v2": 1, "v3": 1e-5}') == {"v1": 0.5, "v2": 1, "v3": 1e-5}
    assert plain_loads('{"v1": 0.5, "v2": 1}', 0, 11) is MISSING  # a slice that is not a whole text
    run = b'{"q1": {"v1": 0.5, "v2": 0.25}, "q2": {"v1": 0.5, "v1": 0.25}}'
    with pytest.raises(InvalidSubmission) as refused:
        list(iter_json_object(run, lambda value: InvalidSubmission([])))
    with pytest.raises(InvalidSubmission) as whole:
        load_json(run)
    assert str(refused.value) == str(whole.value)
    assert "key 'v1' appears more than once in one object" in str(refused.value)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 4611686018427387904.0, "b": 4611686018427387904.0}',  # each below 2**62 in norm, both together above
        '{"a": 9223372036854775807, "b": 1}',  # 2**63 - 1: a float of 2**63 to hypot, an integer below it exactly
        '{"a": -9223372036854775808}',  # -2**63: left to the strict decoder, as before
        '{"a": 9.2e18, "b": -9.2e18, "c": 1e-300}',
        '{"a": 1, "b": "s"}',  # not all numbers: the general walk
        '{"a": "s", "b": 1.5}',
        '{"a": 0.5, "b": [1]}',
        '{"a": true, "b": false, "c": 0}',
        "{}",
    ],
)
def test_a_flat_object_near_the_long_integers_is_the_strict_decoders_or_left_to_it(text: str) -> None:
    # A flat object of numbers is vouched for at once when its Euclidean norm (math.hypot) is below 2**62; any other
    # is checked value by value as before.
    fast = plain_loads(text)
    assert fast is MISSING or _same(fast, _strict(text))
    assert (fast is MISSING) == ("-9223372036854775808" in text)


ID_CHARS = st.sampled_from(["a", ":", '"', "\\", "\u00e9", "\U0001f600", "\n", " ", ","])


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.text(ID_CHARS, max_size=14), st.floats(allow_nan=False, allow_infinity=False), max_size=6),
    st.integers(min_value=0, max_value=9),
    st.booleans(),
)
def test_keys_vouched_short_from_the_text_are_short(
    pairs: list[tuple[str, float]], chars: int, ascii_only: bool
) -> None:
    """``KeyBound`` says an object's keys are at most ``chars`` long only where they are: ids around the limit, with
    colons, quotes, escapes and characters written as surrogate pairs, in an object read fast or by the decoder."""
    text = "{" + ",".join(json.dumps(k, ensure_ascii=ascii_only) + ":" + json.dumps(v) for k, v in pairs.items()) + "}"
    keys = KeyBound(chars)
    read = list(iter_json_object(('{"q": ' + text + "}").encode(), lambda value: InvalidSubmission([]), keys=keys))
    assert read == [("q", pairs)]
    if keys.short:
        assert max(map(len, pairs), default=0) <= chars


def test_a_long_key_is_never_vouched_for_and_a_run_of_short_ones_is() -> None:
    keys = KeyBound(1000)
    short = {f"exploredata-ZA{i:04d}_Varv{i}": i / 7 for i in range(500)}
    read = dict(iter_json_object(json.dumps({"q": short}).encode(), lambda value: InvalidSubmission([]), keys=keys))
    assert read == {"q": short} and keys.short
    for length in (1001, 1002, 1003, 5000):
        long = {**short, "v" * length: 1.0}
        read = dict(iter_json_object(json.dumps({"q": long}).encode(), lambda value: InvalidSubmission([]), keys=keys))
        assert read == {"q": long} and not keys.short


@pytest.mark.parametrize("chars", range(12))
def test_a_key_one_past_the_limit_is_never_vouched_for_wherever_it_lies(chars: int) -> None:
    """Keys one character past the limit, first, in the middle or last among the shortest members JSON allows."""
    for place in range(3):
        run = {**{str(i): 1 for i in range(place)}, "k" * (chars + 1): 1, **{str(i): 1 for i in range(place, 3)}}
        keys = KeyBound(chars)
        text = "{" + ",".join(f'"{k}":{v}' for k, v in run.items()) + "}"
        read = dict(iter_json_object(('{"q":' + text + "}").encode(), lambda value: InvalidSubmission([]), keys=keys))
        assert read == {"q": run} and not keys.short


def _vouched(keys: KeyBound, length: int, before: int) -> bool:
    """Whether ``keys`` vouches for an object whose third key, of ``length`` characters, follows a key of
    ``before`` characters: the shortest members JSON allows, so that the long key's run without a colon starts
    at every place against the windows as ``before`` grows."""
    text = '{"a":0,"' + "b" * before + '":0,"' + "k" * length + '":0}'
    read = dict(iter_json_object(('{"q":' + text + "}").encode(), lambda value: InvalidSubmission([]), keys=keys))
    assert read == {"q": json.loads(text)}
    return keys.short


@pytest.mark.parametrize("chars", [*range(12, 18), 999, 1000])
def test_the_windows_vouch_for_keys_up_to_the_limit_and_never_past_it(chars: int) -> None:
    """At the edge of the windows ``KeyBound`` reads: a key one past the limit is never vouched for wherever it lies,
    and one of the limit (``chars - 1`` for an odd limit, whose windows cannot reach it) is where it lies between two
    windows; one window a character narrower or wider misses one or the other."""
    keys = KeyBound(chars)
    places = range(3 * chars)  # every place against the windows, which are about chars / 2 wide
    assert not any(_vouched(keys, chars + 1, before) for before in places)
    assert any(_vouched(keys, chars - chars % 2, before) for before in places)


@settings(max_examples=300, deadline=None)
@given(VALUES, VALUES, st.booleans())
def test_colons_counted_by_numpy_are_the_colons_counted_one_at_a_time(first: Any, second: Any, spaced: bool) -> None:
    """A large file's colons are counted in its bytes by numpy (``_colon_counter``): the same values, the same texts
    left to the strict decoder (repeated keys, colons in strings) and the same refusals as ``str.count`` gives."""
    import numpy as np

    import scorers.io.json_object as reader

    objects = [_text(value, spaced) for value in (first, second)]
    text = '{"q":' + objects[0] + ',"r":' + objects[1] + "}"
    counter = reader._colon_counter(np.frombuffer(text.encode(), np.uint8), 0)
    for item in objects:
        start = text.index(item)
        found = plain_loads(text, start, start + len(item), colons=counter)
        assert repr(found) == repr(plain_loads(text, start, start + len(item)))

    def read() -> str:
        try:
            return repr(list(iter_json_object(text.encode(), lambda value: InvalidSubmission([]))))
        except InvalidSubmission as refused:
            return str(refused)

    saved, counted_one_at_a_time = reader.NUMPY_COLONS, read()
    try:
        reader.NUMPY_COLONS = 0
        assert read() == counted_one_at_a_time
    finally:
        reader.NUMPY_COLONS = saved
