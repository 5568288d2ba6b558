"""Reading TREC files: qrels (the gold) and runs (submissions), as trec_eval 9.0.8 reads them, minus its silences.

A qrels line is ``query iteration docno relevance`` (four whitespace-separated fields, relevance an integer); a run
line is ``query Q0 docno rank score tag`` (six or more fields; the second, fourth, sixth and later ones are ignored,
the rank too: trec_eval ranks by score). Fields are separated by runs of spaces or tabs (ASCII white space, as C's
``isspace``), lines end in LF or CRLF, the last one may lack its newline, blank lines are skipped, and so are lines
whose first field starts with ``#`` (trec_eval's comments); a ``#`` inside a field is part of it. Queries and docnos
are exact strings. Scores take any decimal or hexadecimal float syntax that C's ``atof`` reads whole (``3.0E+00``,
``+1.5``, ``-1``, ``.5``, ``0x1p3``). The files are UTF-8 (a leading byte-order mark is dropped).

Refused, where trec_eval reads on silently or stops without saying where: a run line with fewer than six fields,
a score that is not a number (``atof`` reads ``abc`` as 0 and ``1.5x`` as 1.5), NaN or an infinite score (``1e999``
included), a docno twice for one query (trec_eval only notices inside the ``-M`` cut, and then stops), a NUL byte
(trec_eval's C strings end there), text that is not UTF-8. In the qrels: a line without exactly four fields, a
relevance that is not an integer in [-1000, 1000] (trec_eval sizes a table by the largest grade), a docno twice
for one query. Every problem names its line.

A run is kept compact while it waits to be scored, so that its memory stays below its size in bytes: per query,
its docnos joined by newlines and their scores as an array of C floats (``Ranking``).

Reading is columnar where it can be: a piece of the file whose every line has exactly the fields of its format is
split into fields in one C pass, its columns taken by slicing (``scorers.generic.trec_columns``), so that no Python
code runs per line;
a piece with anything else (a comment, a blank line, a line with more or fewer fields, a score that is not plainly
decimal) is read line by line as before, which words every problem. numpy is not needed (its import is a good part
of a small run's time): the standard library's ``array`` holds the scores as C floats, the same cast from a double
as numpy's ``astype(float32)``.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from array import array
from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from scorers.errors import InvalidGold, InvalidSubmission, Problem, Problems, ValidationError
from scorers.generic import trec_columns
from scorers.io import BOM, gc_paused

#: Bytes per piece the files are read in (whole lines): small enough that the fields a piece is split into are still
#: in the processor's cache when its columns are taken (pieces of 1 MiB took half as long again).
CHUNK = 1 << 16
MAX_RELEVANCE = 1000
RUN_FIELDS = "query Q0 docno rank score run_tag"
_HEX = re.compile(rb"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?")
_DECIMAL = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(rb"[+-]?\d{1,10}")


@dataclass(frozen=True, eq=False)
class Judged:
    """One query's judgements: docnos joined by newlines (UTF-8) and their relevance values, in file order."""

    docnos: bytes
    #: As C shorts (``array("h")``): a relevance lies in [-1000, 1000].
    relevance: array[int]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Judged):
            return NotImplemented
        return self.docnos == other.docnos and self.relevance == other.relevance

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable arrays inside

    def as_dict(self) -> dict[str, int]:
        return dict(zip(self.docnos.decode("utf-8").split("\n"), self.relevance.tolist(), strict=True))

    @property
    def above_zero(self) -> int:
        """The judgements above 0: what trec_eval 9.0.8's ``-c`` counts as this query's ``num_rel``."""
        return sum(map((0).__lt__, self.relevance))


@dataclass(frozen=True)
class Qrels:
    """Judgements per query, queries in the order of the file (compact: a dictionary per query costs 10x more)."""

    judged: dict[str, Judged]

    @property
    def queries(self) -> list[str]:
        return list(self.judged)


@dataclass(frozen=True)
class Ranking:
    """One query's documents: docnos joined by newlines (UTF-8) and their scores, in the order of the file (equal by
    value; not hashable, as its array is not)."""

    docnos: bytes
    #: As C floats (``array("f")``): trec_eval 9.0.8 holds scores so (a C float keeps exactly what it would keep).
    scores: array[float]

    def documents(self) -> list[str]:
        return self.docnos.decode("utf-8").split("\n")


@dataclass(frozen=True)
class Run:
    """A run's rankings per query, queries in the order of their first line."""

    rankings: dict[str, Ranking]


def _chunks(data: bytes, error: type[ValidationError]) -> Iterator[tuple[int, bytes]]:
    """``(offset, bytes)`` of consecutive pieces of whole lines, checked to be UTF-8 without NUL."""
    start = len(BOM) if data.startswith(BOM) else 0
    while start < len(data):
        end = data.find(b"\n", min(start + CHUNK, len(data)))
        end = len(data) if end < 0 else end + 1
        chunk = data[start:end]
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, start + exc.start) + 1
            raise error([Problem(f"line {line}", "is not UTF-8 text (save the file as UTF-8)")]) from None
        if b"\x00" in chunk:
            line = data.count(b"\n", 0, start + chunk.index(b"\x00")) + 1
            raise error([Problem(f"line {line}", "holds a NUL byte")])
        yield start, chunk
        start = end


class _Numbers:
    """The number of the line at an offset of ``data``, for offsets asked in increasing order: lines are counted only
    up to where a piece needs them (a piece read in columns needs none)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.offset, self.number = data, 0, 1

    def at(self, offset: int) -> int:
        self.number += self.data.count(b"\n", self.offset, offset)
        self.offset = offset
        return self.number


def _is_comment(fields: list[bytes]) -> bool:
    return fields[0].startswith(b"#")


def _show(token: bytes, limit: int = 40) -> str:
    text = token.decode("utf-8")
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


# -- qrels ------------------------------------------------------------------------------------------------------


@gc_paused()
def parse_qrels(data: bytes) -> Qrels:
    """The judgements of a qrels file; ``InvalidGold`` names the lines that are wrong."""
    problems = Problems(InvalidGold)
    judgements: dict[bytes, dict[bytes, int]] = {}
    numbers = _Numbers(data)
    for start, chunk in _chunks(data, InvalidGold):
        columns = trec_columns.columns(chunk, 4, (0, 2, 3))
        if columns is not None and trec_columns.plain_grades(columns[2]):
            values = list(map(int, columns[2]))
            in_range = min(values, default=0) >= -MAX_RELEVANCE and max(values, default=0) <= MAX_RELEVANCE
            if in_range and _judge_all(judgements, columns[0], columns[1], values):
                continue
        for number, line in enumerate(chunk.split(b"\n"), start=numbers.at(start)):
            fields = line.split()
            if not fields or _is_comment(fields):
                continue
            where = f"line {number}"
            if len(fields) != 4:
                problems.add(where, f"has {len(fields)} field(s); a qrels line is: query iteration docno relevance")
                continue
            query, _, docno, relevance = fields
            if not _INTEGER.fullmatch(relevance) or abs(int(relevance)) > MAX_RELEVANCE:
                problems.add(where, f"relevance {_show(relevance)} is not an integer in [-1000, 1000]")
                continue
            judged = judgements.setdefault(query, {})
            if docno in judged:
                problems.add(where, f"docno {_show(docno)} is judged twice for query {_show(query)}")
                continue
            judged[docno] = int(relevance)
    problems.raise_if_any()
    if not judgements:
        raise InvalidGold([Problem("", "the qrels file has no judgement (expected: query iteration docno relevance)")])
    return Qrels(
        {
            query.decode("utf-8"): Judged(b"\n".join(judged), array("h", judged.values()))
            for query, judged in judgements.items()
        }
    )


def _judge_all(
    judgements: dict[bytes, dict[bytes, int]], queries: list[bytes], docnos: list[bytes], values: list[int]
) -> bool:
    """Add the judgements of a clean piece; False (nothing added) if a docno is judged twice for a query."""
    added: dict[bytes, dict[bytes, int]] = {}
    cuts = itertools.compress(itertools.count(1), map(operator.ne, queries[1:], queries[:-1]))
    for start, end in itertools.pairwise([0, *cuts, len(queries)]):
        judged = added.setdefault(queries[start], {})
        before = len(judged)
        judged.update(zip(docnos[start:end], values[start:end], strict=True))
        if len(judged) != before + end - start:
            return False
    for query, judged in added.items():
        existing = judgements.get(query)
        if existing is not None and not existing.keys().isdisjoint(judged):
            return False
    for query, judged in added.items():
        judgements.setdefault(query, {}).update(judged)
    return True


# -- runs -------------------------------------------------------------------------------------------------------


def _fast(chunk: bytes) -> tuple[list[bytes], list[bytes], array[float]] | None:
    """Queries, docnos and scores of a piece whose lines are all well-formed; None if any line needs a closer look."""
    columns = trec_columns.columns(chunk, 6, (0, 2, 4))
    if columns is not None:
        queries, docnos, scores = columns
    else:  # a comment, a blank line or a line of more than six fields: split line by line
        queries, docnos, scores = [], [], []
        comments = b"#" in chunk
        for line in chunk.split(b"\n"):
            fields = line.split()
            if len(fields) >= 6 and not (comments and _is_comment(fields)):
                queries.append(fields[0])
                docnos.append(fields[2])
                scores.append(fields[4])
            elif fields and not (comments and _is_comment(fields)):
                return None
    values = trec_columns.scores(scores)
    return None if values is None else (queries, docnos, values)


def _score(token: bytes) -> float | str:
    """The score ``token`` stands for, or why it is refused."""
    if _DECIMAL.fullmatch(token):
        value = float(token)
    elif _HEX.fullmatch(token):
        value = float.fromhex(token.decode("ascii"))
    elif token.lstrip(b"+-").lower() in (b"nan", b"inf", b"infinity"):
        return f"score {_show(token)} is refused: scores must be finite numbers"
    else:
        return f"score {_show(token)} is not a number"
    return value if math.isfinite(value) else f"score {_show(token)} is too large (it overflows to infinity)"


def _careful(chunk: bytes, first: int, problems: Problems) -> tuple[list[bytes], list[bytes], array[float]]:
    """The same as ``_fast``, line by line, adding every problem to ``problems``."""
    queries: list[bytes] = []
    docnos: list[bytes] = []
    scores: list[float] = []
    for number, line in enumerate(chunk.split(b"\n"), start=first):
        fields = line.split()
        if not fields or _is_comment(fields):
            continue
        if len(fields) < 6:
            problems.add(f"line {number}", f"has {len(fields)} field(s); a run line is: {RUN_FIELDS}")
            continue
        score = _score(fields[4])
        if isinstance(score, str):
            problems.add(f"line {number}", score)
            continue
        queries.append(fields[0])
        docnos.append(fields[2])
        scores.append(score)
    return queries, docnos, array("f", scores)


def _lines_of(data: bytes, wanted: set[tuple[bytes, bytes | None]]) -> dict[tuple[bytes, bytes | None], list[int]]:
    """Line numbers of the run lines for each ``(query, docno)`` in ``wanted`` (docno None: any line of the query)."""
    found: dict[tuple[bytes, bytes | None], list[int]] = {}
    numbers = _Numbers(data)
    for start, chunk in _chunks(data, InvalidSubmission):
        for number, line in enumerate(chunk.split(b"\n"), start=numbers.at(start)):
            fields = line.split()
            if len(fields) < 6 or _is_comment(fields):
                continue
            for key in ((fields[0], fields[2]), (fields[0], None)):
                if key in wanted:
                    found.setdefault(key, []).append(number)
    return found


def _read_rankings(data: bytes, problems: Problems) -> tuple[dict[bytes, list[tuple[bytes, array[float]]]], set[bytes]]:
    """Per query, the pieces of its ranking in file order (docnos joined by newlines, scores), and the queries that
    may rank a docno twice: the others' docnos were checked as read (a set kept while a query's lines follow each
    other), so that only a query whose lines come back after another's, or that repeats one, is split again."""
    parts: dict[bytes, list[tuple[bytes, array[float]]]] = {}
    unchecked: set[bytes] = set()
    current, seen = b"", set[bytes]()  # the query of the last line read and its docnos so far
    numbers = _Numbers(data)
    for offset, chunk in _chunks(data, InvalidSubmission):
        read = _fast(chunk)
        queries, docnos, scores = read if read is not None else _careful(chunk, numbers.at(offset), problems)
        if problems or not queries:
            continue
        # Lines of one query usually follow each other: cut the piece where the query changes.
        for start, end in itertools.pairwise(trec_columns.runs(queries)):
            query, names = queries[start], docnos[start:end]
            if query != current:
                if query in parts:
                    unchecked.add(query)
                current, seen = query, set()
            if query not in unchecked:
                before = len(seen)
                seen.update(names)
                if len(seen) != before + len(names):
                    unchecked.add(query)
            parts.setdefault(query, []).append((b"\n".join(names), scores[start:end]))
    return parts, unchecked


@gc_paused()
def parse_run(data: bytes, queries: Collection[str], *, reject_unknown: bool = False, require_all: bool = False) -> Run:
    """The rankings of a run whose phase judges ``queries``; ``InvalidSubmission`` names the lines that are wrong.

    Only the submission and the public query list decide: ``reject_unknown`` refuses a query that is not in the
    list, ``require_all`` a list query the run lacks; a run none of whose queries is in the list is refused too.
    """
    problems = Problems(InvalidSubmission)
    parts, unchecked = _read_rankings(data, problems)
    problems.raise_if_any()
    if not parts:
        raise InvalidSubmission([Problem("", f"the run has no result line (expected lines: {RUN_FIELDS})")])
    rankings: dict[str, Ranking] = {}
    repeated: set[tuple[bytes, bytes | None]] = set()
    for query, pieces in parts.items():
        docnos = b"\n".join(p[0] for p in pieces) if len(pieces) > 1 else pieces[0][0]
        scores = pieces[0][1]
        for piece in pieces[1:]:
            scores += piece[1]
        if query in unchecked:
            names = docnos.split(b"\n")
            repeated.update((query, docno) for docno, n in Counter(names).items() if n > 1)
        rankings[query.decode("utf-8")] = Ranking(docnos, scores)
    if repeated:
        again = sorted((n, key, lines[0]) for key, lines in _lines_of(data, repeated).items() for n in lines[1:])
        for number, (query, docno), first in again:
            message = f"docno {_show(docno or b'')} is ranked again for query {_show(query)} (first at line {first})"
            problems.add(f"line {number}", message)
    _check_queries(data, rankings, queries, problems, reject_unknown=reject_unknown, require_all=require_all)
    problems.raise_if_any()
    return Run(rankings)


def _check_queries(
    data: bytes,
    rankings: dict[str, Ranking],
    queries: Collection[str],
    problems: Problems,
    *,
    reject_unknown: bool,
    require_all: bool,
) -> None:
    known = set(queries)
    unknown = [q for q in rankings if q not in known]
    if len(unknown) == len(rankings):
        problems.add(
            "", f"none of the run's {len(rankings)} queries is in the phase's query list (first: {unknown[0]!r})"
        )
    elif reject_unknown and unknown:
        wanted: set[tuple[bytes, bytes | None]] = {(q.encode("utf-8"), None) for q in unknown}
        for (name, _), lines in sorted(_lines_of(data, wanted).items(), key=lambda item: item[1][0]):
            problems.add(f"line {lines[0]}", f"query {_show(name)} is not in the phase's query list")
    if require_all:
        for query in queries:
            if query not in rankings:
                problems.add(f"query {query!r}", "is in the phase's query list but the run has no line for it")
