"""Reading SV-Ident 2022 files: the release TSV (gold) and the participants' JSON submissions.

The gold is the release TSV with a header row and the columns sentence, is_variable, variable,
research_data, doc_id, uuid, lang (any order; extra columns are ignored), read with a CSV reader in
tab mode because a few release rows quote a field. ``variable`` is a ``;``-separated list that may hold
``unk``. Fields are stripped of surrounding white space; empty list items are ignored. Task 1
submissions are ``{uuid: label}``, Task 2 submissions ``{uuid: {variable_id: score}}`` within the size
limits of ``RunLimits``. Submissions are validated against the public view, the uuids of the sentences that
participants are given (``PublicIds``), never against the gold's labels or variables. This module only validates and
builds typed values; ``scorers.tasks.svident`` scores them. Every problem is collected with its place
(line of the gold, key of the submission) and what was expected.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from scorers.base import PublicIds
from scorers.errors import InvalidGold, InvalidSubmission, Problem, Problems
from scorers.families import ranking
from scorers.io import gc_paused, iter_json_object, iter_tsv, load_json
from scorers.io.json_object import KeyBound
from scorers.tasks.limits import SizeLimits, bound

COLUMNS = ("sentence", "is_variable", "variable", "research_data", "doc_id", "uuid", "lang")
#: The tag annotators used for a mention they could not link to one variable; never relevant.
UNKNOWN_VARIABLE = "unk"
LABEL_VALUES = '"0", "1", 0, 1'
#: The accepted labels (values of a Task 1 submission) and the label each stands for.
_LABEL_CODES: dict[str | int, int] = {"0": 0, "1": 1, 0: 0, 1: 1}
#: Candidate lists of a Task 2 run cut together (``_cut``): enough that numpy's calls cost little a list, few enough
#: that their candidates stay in the processor's cache.
BATCH_LISTS = 8
#: A run of this many bytes or more holds thousands of lists to cut (the 1x bench run, 14 MB, holds 1,724), which
#: numpy then cuts from the first (``ranking.expect_many``); a smaller one is cut in plain Python until
#: ``ranking.PLAIN_PRUNES``, without importing numpy.
LARGE_RUN = 1 << 25


@dataclass(frozen=True)
class RunLimits(SizeLimits):
    """Size limits of a Task 2 run; the real maxima are 500 candidates a query, 358,500 in all and ids of 30
    characters (the official test run), so the defaults only refuse what no system produces."""

    candidates_per_query: int = bound(10_000, "candidates accepted for one sentence")
    candidates: int = bound(
        50_000_000, "candidates accepted in the whole run (room for 100 copies of the official test run)"
    )
    variable_chars: int = bound(1_000, "characters accepted in one variable id")
    relevant_per_query: int = bound(
        50,
        "relevant variables accepted for one sentence of the gold (the release has at most 31); each candidate "
        "list is kept to the top max(this, largest cutoff), the ranks the measures may look at",
    )


@dataclass(frozen=True)
class SvIdentGold:
    """The gold sentences, keyed by uuid in file order: ``label`` and ``group`` hold the same uuids in the same
    order.

    ``relevant`` holds the Task 2 queries only: sentences with is_variable 1 and at least one variable
    other than ``unk``, each with its set of such variables; it is empty where the gold was read for Task 1
    (``parse_gold(..., queries=False)``).
    """

    label: dict[str, int]
    group: dict[str, tuple[str, str]]
    relevant: dict[str, frozenset[str]]


def show(value: Any, limit: int = 60) -> str:
    """A short JSON rendering of a value (a key, a label, a score) for messages."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError):
        return "a deeply nested value"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def where(key: str) -> str:
    """The place of a submission entry in messages: ``key "eb75..."``."""
    return f"key {show(key)}"


def _kind(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    kinds = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "an object"}
    return kinds.get(type(value), type(value).__name__)


# -- gold -----------------------------------------------------------------------------------------


@gc_paused()  # many small containers, no cycles: see scorers.io.gc_paused
def parse_gold(data: bytes, limits: RunLimits | None = None, *, queries: bool = True) -> SvIdentGold:
    """Validate the release TSV; refuse missing columns, bad labels, empty or repeated uuids, and, with
    ``limits`` (Task 2), a sentence with more relevant variables than ``limits.relevant_per_query``.

    Rows are read and checked one at a time (``iter_tsv``), so only what the gold keeps of each is held.
    ``queries=False`` (Task 1, which never looks at variables) leaves ``relevant`` empty and the variables
    column unread.
    """
    rows = iter_tsv(data, InvalidGold)
    expected = ", ".join(COLUMNS)
    first = next(rows, None)
    if first is None:
        raise InvalidGold(
            [Problem("", f"the file is empty; expected a header row ({expected}) and one row per sentence")]
        )
    header_line, header = first[0], [name.strip() for name in first[1]]
    missing = [name for name in COLUMNS if name not in header]
    repeated = sorted({name for name in COLUMNS if header.count(name) > 1})
    if missing or repeated:
        what = (
            f"lacks the column(s) {', '.join(missing)}" if missing else f"repeats the column(s) {', '.join(repeated)}"
        )
        raise InvalidGold([Problem(f"line {header_line}", f"the header row {what}; expected the columns {expected}")])
    # The columns' places in locals: this loop runs once per sentence and is most of scoring Task 1.
    at_uuid, at_label, at_lang, at_doc, at_variable = (
        header.index(name) for name in ("uuid", "is_variable", "lang", "doc_id", "variable")
    )
    fields = len(header)
    problems = Problems(InvalidGold)
    label: dict[str, int] = {}
    group: dict[str, tuple[str, str]] = {}
    relevant: dict[str, frozenset[str]] = {}
    documents: dict[tuple[str, str], tuple[str, str]] = {}
    # A uuid is seen once it is in ``label`` or, for a row refused for another reason, in ``refused``; the line
    # a repeated uuid was first on is looked up only when one is found (``first_lines``), not kept per row.
    refused: set[str] = set()
    first_lines: dict[str, int] | None = None
    not_relevant = {"", UNKNOWN_VARIABLE}
    sentences = 0
    for line, row in rows:
        sentences += 1
        if len(row) != fields:
            problems.add(f"line {line}", f"has {len(row)} tab-separated fields; expected {fields} as in the header")
            continue
        uuid, is_variable = row[at_uuid].strip(), row[at_label].strip()
        lang, doc_id = row[at_lang].strip(), row[at_doc].strip()
        # The common row is checked inline; _row_problems words what is wrong with any other.
        good = uuid and lang and doc_id and is_variable in ("0", "1") and "/" not in lang
        found = () if good else _row_problems(uuid, is_variable, lang, doc_id)
        for message in found:
            problems.add(f"line {line}", message)
        if uuid in label or uuid in refused:
            if first_lines is None:
                first_lines = _first_lines(data, at_uuid, fields)
            problems.add(
                f"line {line}",
                f"uuid {show(uuid)} is repeated; uuids must be unique (first on line {first_lines[uuid]})",
            )
            continue
        if found:
            if uuid:
                refused.add(uuid)
            continue
        label[uuid] = 0 if is_variable == "0" else 1
        # One tuple per document, shared by its sentences (each row's strings are new objects).
        key = (lang, doc_id)
        group[uuid] = documents.setdefault(key, key)
        if is_variable == "0" or not queries:
            continue
        variables = frozenset(map(str.strip, row[at_variable].split(";"))) - not_relevant
        if variables:
            relevant[uuid] = variables
            if limits is not None and len(variables) > limits.relevant_per_query:
                problems.add(
                    f"line {line}",
                    f"uuid {show(uuid)} has "
                    + limits.exceeded("relevant_per_query", len(variables), "relevant variables"),
                )
    if not sentences:
        raise InvalidGold([Problem("", "the file has a header row but no sentences")])
    problems.raise_if_any()
    return SvIdentGold(label, group, relevant)


def _first_lines(data: bytes, at_uuid: int, fields: int) -> dict[str, int]:
    """The line each uuid is first on, counting the rows ``parse_gold`` counts (those with every field and a
    uuid); read again from the file, only for a gold that repeats one."""
    first: dict[str, int] = {}
    rows = iter_tsv(data, InvalidGold)
    next(rows)  # the header
    for line, row in rows:
        if len(row) == fields:
            first.setdefault(row[at_uuid].strip(), line)
    return first


def _row_problems(uuid: str, is_variable: str, lang: str, doc_id: str) -> list[str]:
    problems = []
    if not uuid:
        problems.append("uuid is empty; every sentence needs a unique uuid")
    if is_variable not in ("0", "1"):
        problems.append(f'is_variable {show(is_variable)} is not "0" or "1"')
    if not lang:
        problems.append("lang is empty; expected a language code such as en or de")
    elif "/" in lang:
        problems.append(f'lang {show(lang)} contains "/", which would make group ids "lang/doc_id" ambiguous')
    if not doc_id:
        problems.append("doc_id is empty; every sentence belongs to a document")
    return problems


# -- submissions ----------------------------------------------------------------------------------


def _not_object(shape: str, value: Any) -> InvalidSubmission:
    return InvalidSubmission([Problem("top level", f"expected one JSON object {shape}, not {_kind(value)}")])


def _top_object(data: bytes, shape: str) -> dict[str, Any]:
    value = load_json(data, InvalidSubmission)
    if not isinstance(value, dict):
        raise _not_object(shape, value)
    return value


@gc_paused()
def parse_labels(data: bytes, public: PublicIds) -> dict[str, int]:
    """Task 1: ``{uuid: label}`` with a label "0"/"1" or 0/1 for every test sentence and nothing else."""
    submitted = _top_object(data, '{uuid: label} with labels "0"/"1" or 0/1')
    known = public.known
    # The common file, checked and converted without a Python step per sentence: every key a test sentence's
    # uuid, as many keys as sentences (so none missing), every value one of the four labels (the types first,
    # since True == 1 and 1.0 == 1). Any other file is read entry by entry below, which words its problems.
    # Keys in the test's order (as most files have them) are compared in order, which reads memory in order;
    # looking each one up in ``known`` reads it at random, a cache miss apiece on a large file.
    labels_given = submitted.values()
    if (
        len(submitted) == len(known)
        and (in_order(submitted, public.ids) or known.issuperset(submitted))
        and set(map(type, labels_given)) <= {str, int}
        and set(labels_given) <= _LABEL_CODES.keys()
    ):
        return dict(zip(submitted, map(_LABEL_CODES.__getitem__, labels_given), strict=True))
    problems = Problems(InvalidSubmission)
    labels: dict[str, int] = {}
    for key, value in submitted.items():
        if key not in known:
            problems.add(where(key), "is not a uuid of a gold sentence")
        elif type(value) is str and value in ("0", "1"):
            labels[key] = int(value)
        elif type(value) is int and value in (0, 1):
            labels[key] = value
        else:
            problems.add(where(key), f"label {show(value)} is not one of {LABEL_VALUES}")
    _missing(public.ids, submitted, problems, f"every gold sentence needs a label ({LABEL_VALUES})")
    problems.raise_if_any()
    return labels


@gc_paused()
def parse_run(
    data: bytes, public: PublicIds, cutoffs: Collection[int], *, limits: RunLimits = RunLimits()
) -> Mapping[str, Mapping[str, float]]:
    """Task 2: ``{uuid: {variable_id: score}}`` with finite number scores, for any of the test sentences.

    Which sentences are queries is the answer, so no list is required and every one is validated alike;
    scoring looks at the queries' lists and counts a missing query as 0. Each list is pruned to the
    candidates that can reach the deepest rank any measure may look at, max(largest cutoff,
    ``limits.relevant_per_query``) (``ranking.prune``), ``BATCH_LISTS`` lists at a time as they are read
    (``_cut``), so a huge run is never held whole: only its text and the pruned lists (``ranking.KeptLists``).
    """
    shape = "{uuid: {variable_id: score}}"
    problems = Problems(InvalidSubmission)
    run = ranking.KeptLists()
    keep = ranking.depth(cutoffs, limits.relevant_per_query)
    known = public.known
    total, per_query = 0, limits.candidates_per_query
    pending: list[tuple[str, dict[str, Any]]] = []
    keys = KeyBound(limits.variable_chars)  # vouches from the text for most lists' variable ids (_plain)
    if len(data) >= LARGE_RUN:
        ranking.expect_many()
    # Parsed whole, a run takes more than twice its file in objects. The refusals of the whole file come
    # first, as load_json gives them (iter_json_object), then the total, then the entries' problems.
    # Scores that overflow come as infinities (finite=False) and are refused with the entry (_check_scores).
    for key, candidates in iter_json_object(data, lambda value: _not_object(shape, value), finite=False, keys=keys):
        if isinstance(candidates, dict):
            total += len(candidates)
        if total > limits.candidates:
            continue  # the run is refused as a whole below; reading on only finds any syntax error
        if (
            not problems
            and key in known
            and type(candidates) is dict
            and len(candidates) <= per_query
            and _plain(candidates, limits.variable_chars, short=keys.short)
        ):
            pending.append((key, candidates))  # cut BATCH_LISTS at a time: numpy's calls then cost little a list
            if len(pending) == BATCH_LISTS:
                _cut(pending, keep, run)
            continue
        _cut(pending, keep, run)  # the lists before this one first, in the file's order
        if key not in known:
            problems.add(where(key), "is not a uuid of a gold sentence")
        elif not isinstance(candidates, dict):
            problems.add(where(key), f"expected an object {{variable_id: score}}, not {_kind(candidates)}")
        elif len(candidates) > limits.candidates_per_query:
            problems.add(where(key), limits.exceeded("candidates_per_query", len(candidates), "candidates"))
        elif (
            _check_variables(key, candidates, limits, problems)
            and _check_scores(key, candidates, problems)
            and not problems
        ):
            run.add(key, ranking.prune(candidates, keep))
    _cut(pending, keep, run)
    if total > limits.candidates:
        raise InvalidSubmission([Problem("top level", limits.exceeded("candidates", total, "candidates in all"))])
    problems.raise_if_any()
    return run


def _plain(candidates: dict[str, Any], variable_chars: int, *, short: bool = False) -> bool:
    """True for the common list, which ``_check_variables`` and ``_check_scores`` pass without a word: every score a
    float, their sum finite (floats whose sum is finite hold no infinity), no variable id beyond the limit. Two
    passes in C over a list just read, while it is in the processor's cache: ``float.conjugate`` gives a float itself
    and refuses anything else (TypeError), so one pass checks the types and adds the scores. ``short``: the reader
    found from the list's text that no id is beyond the limit (``KeyBound``), which saves the ids' lengths (a read of
    every id's string, the larger part of this check)."""
    try:
        finite = math.isfinite(sum(map(float.conjugate, candidates.values())))
    except TypeError:
        return False
    return finite and (short or max(map(len, candidates), default=0) <= variable_chars)


def _cut(pending: list[tuple[str, dict[str, Any]]], keep: int, run: ranking.KeptLists) -> None:
    """Cut the lists of ``pending`` (every score a float: ``_plain``) together (``ranking.prune_lists``) into ``run``,
    then empty it."""
    if pending:
        run.add_cut([key for key, _ in pending], [c for _, c in pending], keep)
        pending.clear()


def _check_variables(key: str, candidates: dict[str, Any], limits: RunLimits, problems: Problems) -> bool:
    """True when no variable id is longer than the limit; else the first one is reported."""
    if not candidates or max(map(len, candidates)) <= limits.variable_chars:  # no Python loop in the common case
        return True
    variable = next(v for v in candidates if len(v) > limits.variable_chars)
    problems.add(
        f"{where(key)}, variable {show(variable)}", limits.exceeded("variable_chars", len(variable), "characters")
    )
    return False


def _check_scores(key: str, candidates: dict[str, Any], problems: Problems) -> bool:
    """True when every score is a JSON number that is finite as a double (NaN never parses; 1e999 parses as an
    infinity, see ``parse_run``)."""
    scores = candidates.values()
    # The common case, checked without a Python loop over the candidates: floats whose sum (added as C doubles) is
    # finite hold no infinity; a sum that overflows, or an infinity, is looked at score by score below.
    if set(map(type, scores)) <= {float} and math.isfinite(sum(scores)):
        return True
    ok = True
    for variable, score in candidates.items():
        if type(score) is int:
            try:
                float(score)
                continue
            except OverflowError:
                message = "is too large: a score must be finite as a double"
        elif type(score) is float:
            if not math.isinf(score):
                continue
            # The number as written is gone; its value would read "Infinity", which the file does not say.
            problems.add(
                f"{where(key)}, variable {show(variable)}", "the score is too large (it overflows to infinity)"
            )
            ok = False
            continue
        else:
            message = "is not a JSON number (numeric strings and true/false are not scores)"
        problems.add(f"{where(key)}, variable {show(variable)}", f"score {show(score)} {message}")
        ok = False
    return ok


def in_order(keys: Collection[str], expected: Collection[str]) -> bool:
    """True when ``keys`` are ``expected``, in the same order (compared in C, element by element)."""
    return len(keys) == len(expected) and all(map(operator.eq, keys, expected))


def _missing(expected: Collection[str], submitted: Collection[str], problems: Problems, why: str) -> None:
    for uuid in expected:
        if uuid not in submitted:
            problems.add(where(uuid), f"is missing: {why}")
