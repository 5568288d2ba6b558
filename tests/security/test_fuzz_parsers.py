"""Fuzzing every registered scorer's ``parse_submission``: arbitrary bytes, and mutations of a valid
submission built from the scorer's example gold (keys dropped or repeated, types swapped, huge
numbers, NaN tokens, deep nesting, odd Unicode, truncation), bare or zipped. A file is either
accepted, and then scores to finite numbers in [0, 1], or refused with an ``InvalidSubmission`` that
names its problems; nothing else may escape.

The per-task tests in ``tests/scorers`` fuzz each format with strategies of its own; this one runs
the same format-agnostic mutations of the JSON tree over the whole registry, so a new scorer is
fuzzed as soon as it has an example bundle.
"""

from __future__ import annotations

import copy
import io
import json
import math
import zipfile
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorers import InvalidSubmission, Scorer, ValidationError, get_scorer, scorer_class, unpack_submission
from scorers.families import trec_measures
from scorers.generic.program import ProgramFailed
from tests.security.hostile_files import CENTRAL, CENTRAL_VERSION, patch_header, zipped
from tests.security.seed_examples import example, seed_scorers

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: The scorers of text formats, whose files these tests mutate as text; a scoring program's results are a zip
#: (``raw_submission``), mutated as a zip below.
SCORERS = [name for name in seed_scorers() if not scorer_class(name).raw_submission]
ARCHIVE_SCORERS = [name for name in seed_scorers() if scorer_class(name).raw_submission]


@cache
def scorer_and_gold(name: str) -> tuple[Scorer[Any, Any, Any], Any]:
    scorer = get_scorer(name)
    return scorer, scorer.parse_gold(example(name).gold)


def parse_or_refuse(name: str, data: bytes) -> None:
    """The property: refused with named problems, or accepted and then scored to sane numbers."""
    scorer, gold = scorer_and_gold(name)
    try:
        parsed = scorer.parse_submission(data, scorer.public_view(gold))
    except ValidationError as exc:
        assert isinstance(exc, InvalidSubmission), type(exc)
        assert exc.problems and all(p.message for p in exc.problems)
        assert str(exc).startswith("The submission was refused")
        return
    metrics = scorer.compute(gold, parsed).metrics
    assert all(math.isfinite(v) and in_range(name, metric, v) for metric, v in metrics.items()), metrics


#: Metrics that are not fractions in [0, 1]: the range each lies in.
RANGES: dict[str, dict[str, tuple[float, float]]] = {
    "regression": {
        "pearson": (-1.0, 1.0),
        "spearman": (-1.0, 1.0),
        "kendall": (-1.0, 1.0),
        "mae": (0.0, math.inf),
        "rmse": (0.0, math.inf),
        "r2": (-math.inf, 1.0),
    },
}


def in_range(scorer: str, metric: str, value: float) -> bool:
    """Whether a number lies where the metric's definition puts it (a fraction in [0, 1] unless said otherwise)."""
    if scorer == "trec":
        kind = trec_measures.parse_measure(metric).value
        low, high = {"fraction": (0.0, 1.0), "integer": (0.0, math.inf)}.get(kind, (-math.inf, math.inf))
    else:
        low, high = RANGES.get(scorer, {}).get(metric, (0.0, 1.0))
    return low - 1e-12 <= value <= high + 1e-12


def unpack_parse_or_refuse(name: str, archive: bytes) -> None:
    try:
        content, _ = unpack_submission(archive, max_bytes=1 << 20, max_entries=8)
    except ValidationError as exc:
        assert isinstance(exc, InvalidSubmission) and exc.problems
        return
    parse_or_refuse(name, content)


# -- a model of JSON that can say what Python's dicts cannot: repeated keys, raw number tokens -------


class Obj(list[tuple[str, Any]]):
    """A JSON object as its list of (key, value) pairs, so that a key can appear twice."""


@dataclass(frozen=True)
class Raw:
    """A token written as it is: ``NaN``, ``1e999``, a 5,000-digit integer, ``-0``."""

    text: str


def to_model(value: Any) -> Any:
    if isinstance(value, dict):
        return Obj((key, to_model(item)) for key, item in value.items())
    if isinstance(value, list):
        return [to_model(item) for item in value]
    return value


def dump(value: Any) -> str:
    # Written by hand because json.dumps can neither repeat a key nor write an arbitrary token.
    if isinstance(value, Obj):
        return "{" + ", ".join(f"{json.dumps(key)}: {dump(item)}" for key, item in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump(item) for item in value) + "]"
    if isinstance(value, Raw):
        return value.text
    return json.dumps(value)


@dataclass(frozen=True)
class Document:
    """A valid submission as a model: one JSON value, the values of a JSON Lines file, or (a text format such as a
    TREC run) the whitespace-separated fields of each line."""

    values: list[Any]
    lines: bool
    fields: bool = False

    @classmethod
    def of(cls, data: bytes) -> Document:
        text = data.decode("utf-8")
        try:
            return cls([to_model(json.loads(text))], lines=False)
        except json.JSONDecodeError:
            pass
        try:
            return cls([to_model(json.loads(line)) for line in text.splitlines() if line.strip()], lines=True)
        except json.JSONDecodeError:
            return cls([line.split() for line in text.splitlines() if line.strip()], lines=True, fields=True)

    def render(self) -> str:
        # A dropped root leaves an empty file; a repeated one, two documents in one file.
        if self.fields:
            return "\n".join(" ".join(map(field, v)) if isinstance(v, list) else field(v) for v in self.values)
        return ("\n" if self.lines else " ").join(dump(v) for v in self.values)


def field(value: Any) -> str:
    """A field of a text line: text as it is, anything else as JSON would write it."""
    return value if isinstance(value, str) else dump(value)


def slots(value: Any) -> list[tuple[list[Any], int]]:
    """Every place a value sits in the tree, as (container, index); objects hold (key, value) pairs."""
    found: list[tuple[list[Any], int]] = []
    items = value if isinstance(value, list) else []
    for index, item in enumerate(items):
        found.append((items, index))
        found.extend(slots(item[1] if isinstance(value, Obj) else item))
    return found


ODD_TEXT = [
    "",
    "\x00",
    "\ud800",  # a lone surrogate: valid in JSON text, not encodable as UTF-8
    "\u202eevil",
    "e\u0301",
    "\ufeff",
    "🙂" * 3,
    "x" * 10_000,
    " 1 ",
    "1",
    "0",
    "null",
]
TOKENS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "-0", "1E-400", "9" * 5000, "-" + "9" * 40, "0.0"]
REPLACEMENTS: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from([None, True, False, 0, 1, -1, 2, 0.5, 1e308, -(2**63), 2**64, [], Obj(), [[]]]),
    st.sampled_from(ODD_TEXT),
    st.sampled_from(TOKENS).map(Raw),
    st.text(max_size=20),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
)


def nest(value: Any, depth: int, as_object: bool) -> Raw:
    """``value`` inside ``depth`` arrays or objects, as text (a deep tree would overflow ``dump``)."""
    opener, closer = ('{"a": ', "}") if as_object else ("[", "]")
    return Raw(opener * depth + dump(value) + closer * depth)


def mutate(draw: st.DrawFn, document: Document) -> Document:
    """One mutation at a place of the tree chosen by hypothesis."""
    root: list[Any] = list(document.values)
    places = [(root, i) for i in range(len(root))] + [p for v in root for p in slots(v)]
    if not places:  # everything was dropped already
        return document
    container, index = draw(st.sampled_from(places))
    is_pair = isinstance(container, Obj)
    current = container[index][1] if is_pair else container[index]

    def put(value: Any) -> None:
        container[index] = (container[index][0], value) if is_pair else value

    action = draw(st.sampled_from(["drop", "repeat", "replace", "nest", "rename", "negate", "boolean"]))
    if action == "drop":
        del container[index]
    elif action == "repeat":
        container.insert(index, container[index])
    elif action == "replace":
        # A copy: the sampled values ([], [[]], Obj()) are shared between examples, and a later mutation that
        # changed one in place would make hypothesis draw differently on a replay (FlakyStrategyDefinition).
        put(copy.deepcopy(draw(REPLACEMENTS)))
    elif action == "nest":
        put(nest(current, draw(st.sampled_from([1, 50, 900, 100_000])), draw(st.booleans())))
    elif action == "rename" and is_pair:
        container[index] = (draw(st.sampled_from([*ODD_TEXT, "doc_id", "docid", "__proto__"])), current)
    elif action == "negate" and isinstance(current, int | float) and not isinstance(current, bool):
        put(-current - 1)
    else:  # "boolean", or a rename outside an object, or a negation of what is not a number
        put(not current if isinstance(current, bool) else True)
    return Document(root, document.lines, document.fields)


@st.composite
def mutated(draw: st.DrawFn, name: str) -> bytes:
    """The scorer's valid example submission after one to four mutations, maybe cut short or re-encoded."""
    document = Document.of(example(name).submission)  # parsed afresh: mutations change it in place
    for _ in range(draw(st.integers(1, 4))):
        document = mutate(draw, document)
    text = document.render()
    data = text.encode("utf-8", "surrogatepass")
    edit = draw(st.sampled_from(["none", "truncate", "bom", "crlf", "blank lines", "utf-16", "byte"]))
    if edit == "truncate":
        data = data[: draw(st.integers(0, max(0, len(data) - 1)))]
    elif edit == "bom":
        data = b"\xef\xbb\xbf" + data
    elif edit == "crlf":
        data = data.replace(b"\n", b"\r\n")
    elif edit == "blank lines":
        data = b"\n\n" + data.replace(b"\n", b"\n \n") + b"\n\n"
    elif edit == "utf-16":
        data = text.encode("utf-16", "surrogatepass")
    elif edit == "byte" and data:
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1 :]
    return data


# -- the tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SCORERS)
def test_the_unmutated_example_is_accepted_bare_and_zipped(name: str) -> None:
    data = example(name).submission
    parse_or_refuse(name, data)
    scorer, gold = scorer_and_gold(name)
    scorer.parse_submission(data, scorer.public_view(gold))  # accepted, not refused
    content, inner = unpack_submission(zipped({"out/submission.json": data}))
    assert (content, inner) == (data, "out/submission.json")


@pytest.mark.parametrize("name", SCORERS)
@FUZZ
@given(data=st.binary(max_size=2048))
def test_arbitrary_bytes_are_refused_or_accepted_cleanly(name: str, data: bytes) -> None:
    parse_or_refuse(name, data)


@pytest.mark.parametrize("name", SCORERS)
@FUZZ
@given(data=st.data())
def test_mutations_of_a_valid_file_are_refused_or_accepted_cleanly(name: str, data: st.DataObject) -> None:
    parse_or_refuse(name, data.draw(mutated(name)))


@pytest.mark.parametrize("name", SCORERS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_zipped_mutations_are_refused_or_accepted_cleanly(name: str, data: st.DataObject) -> None:
    content = data.draw(st.one_of(st.just(example(name).submission), mutated(name)))
    entry = data.draw(st.sampled_from(["submission.json", "a/b/run.jsonl", "../run.json", "/abs.json", "C:x.json"]))
    extras = data.draw(st.sampled_from([{}, {"__MACOSX/._x": b"junk"}, {"dir/": b""}, {"second.json": b"{}"}]))
    compression = data.draw(
        st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
    )
    archive = zipped({entry: content, **extras}, compression)
    damage = data.draw(st.sampled_from(["none", "truncate", "byte"]))
    if damage == "truncate":
        archive = archive[: data.draw(st.integers(0, len(archive) - 1))]
    elif damage == "byte":
        at = data.draw(st.integers(0, len(archive) - 1))
        archive = archive[:at] + bytes([data.draw(st.integers(0, 255))]) + archive[at + 1 :]
    unpack_parse_or_refuse(name, archive)


@pytest.mark.parametrize("name", ARCHIVE_SCORERS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_damaged_result_archives_are_refused_or_scored_cleanly(name: str, data: st.DataObject) -> None:
    """A scoring program's results zip, with entries renamed, added and the bytes damaged: refused with named
    problems, or accepted and scored (what the program makes of odd files is its business: a run that gives no
    scores fails the submission, never the server)."""
    inner = zipfile.ZipFile(io.BytesIO(example(name).submission))
    entries = {info.filename: inner.read(info) for info in inner.infolist()}
    entry = data.draw(st.sampled_from(["prediction.txt", "a/b/prediction.txt", "../x", "/abs", "C:x", "dir/"]))
    extras = data.draw(st.sampled_from([{}, {"__MACOSX/._x": b"junk"}, {"second.txt": b"{}"}]))
    archive = zipped({entry: next(iter(entries.values())), **extras})
    damage = data.draw(st.sampled_from(["none", "truncate", "byte"]))
    if damage == "truncate":
        archive = archive[: data.draw(st.integers(0, len(archive) - 1))]
    elif damage == "byte":
        at = data.draw(st.integers(0, len(archive) - 1))
        archive = archive[:at] + bytes([data.draw(st.integers(0, 255))]) + archive[at + 1 :]
    scorer, gold = scorer_and_gold(name)
    try:
        parsed = scorer.parse_submission(archive, scorer.public_view(gold))
    except ValidationError as exc:
        assert isinstance(exc, InvalidSubmission) and exc.problems and all(p.message for p in exc.problems)
        return
    try:
        metrics = scorer.compute(gold, parsed).metrics
    except ProgramFailed as failed:
        assert failed.outcome.run is not None and not failed.outcome.ok
        return
    assert all(math.isfinite(v) for v in metrics.values()), metrics


@pytest.mark.parametrize(
    ("compression", "offset"),
    [(zipfile.ZIP_DEFLATED, 0), (zipfile.ZIP_LZMA, 2), (zipfile.ZIP_BZIP2, 4)],
    ids=["deflate", "lzma", "bzip2"],
)
def test_a_damaged_compressed_stream_is_refused_as_a_bad_zip(compression: int, offset: int) -> None:
    """Found by the fuzzing above: zlib and lzma raise errors of their own on a damaged stream."""
    archive = bytearray(zipped({"submission.json": b'{"a": 1}' * 100}, compression))
    data_start = 30 + len("submission.json")  # after the local file header (APPNOTE 4.3.7)
    archive[data_start + offset] = 0
    with pytest.raises(InvalidSubmission, match=r"zip archive: entry 'submission.json' cannot be unpacked"):
        unpack_submission(bytes(archive))


def test_a_zip_that_needs_a_newer_zip_version_is_refused() -> None:
    """Found by the fuzzing above: zipfile refuses version 6.4 and up with NotImplementedError."""
    archive = patch_header(zipped({"submission.json": b"{}"}), CENTRAL, CENTRAL_VERSION, 2, 64)
    with pytest.raises(InvalidSubmission, match=r"zip archive: cannot be read \(zip file version 6.4\)"):
        unpack_submission(archive)
