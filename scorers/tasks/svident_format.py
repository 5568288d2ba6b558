"""Reading SV-Ident 2022 files: the release TSV (gold) and the participants' JSON submissions.

The gold is the release TSV with a header row and the columns sentence, is_variable, variable,
research_data, doc_id, uuid, lang (any order; extra columns are ignored), read with a CSV reader in
tab mode because a few release rows quote a field. ``variable`` is a ``;``-separated list that may hold
``unk``. Fields are stripped of surrounding white space; empty list items are ignored. Task 1
submissions are ``{uuid: label}``, Task 2 submissions ``{uuid: {variable_id: score}}`` within the size
limits of ``RunLimits``. This module only validates and builds typed values; ``scorers.tasks.svident``
scores them. Every problem is collected with its place (line of the gold, key of the submission) and
what was expected.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from scorers.errors import InvalidGold, InvalidSubmission, Problem, Problems
from scorers.families import ranking
from scorers.io import decode_text, load_json, read_tsv
from scorers.tasks.limits import Limits, bound

COLUMNS = ("sentence", "is_variable", "variable", "research_data", "doc_id", "uuid", "lang")
#: The tag annotators used for a mention they could not link to one variable; never relevant.
UNKNOWN_VARIABLE = "unk"
LABEL_VALUES = '"0", "1", 0, 1'


@dataclass(frozen=True)
class RunLimits(Limits):
    """Size limits of a Task 2 run; the real maxima are 500 candidates a query, 358,500 in all and ids of 30
    characters (the official test run), so the defaults only refuse what no system produces."""

    candidates_per_query: int = bound(10_000, "candidates accepted for one sentence")
    candidates: int = bound(
        50_000_000, "candidates accepted in the whole run (room for 100 copies of the official test run)"
    )
    variable_chars: int = bound(1_000, "characters accepted in one variable id")


@dataclass(frozen=True)
class SvIdentGold:
    """The gold sentences, keyed by uuid in file order.

    ``relevant`` holds the Task 2 queries only: sentences with is_variable 1 and at least one variable
    other than ``unk``, each with its set of such variables.
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


def parse_gold(data: bytes) -> SvIdentGold:
    """Validate the release TSV; refuse missing columns, bad labels, empty or repeated uuids."""
    rows = read_tsv(data, InvalidGold)
    expected = ", ".join(COLUMNS)
    if not rows:
        raise InvalidGold(
            [Problem("", f"the file is empty; expected a header row ({expected}) and one row per sentence")]
        )
    header = [name.strip() for name in rows[0]]
    missing = [name for name in COLUMNS if name not in header]
    repeated = sorted({name for name in COLUMNS if header.count(name) > 1})
    if missing or repeated:
        what = (
            f"lacks the column(s) {', '.join(missing)}" if missing else f"repeats the column(s) {', '.join(repeated)}"
        )
        line = _row_lines(data)[0]
        raise InvalidGold([Problem(f"line {line}", f"the header row {what}; expected the columns {expected}")])
    if len(rows) == 1:
        raise InvalidGold([Problem("", "the file has a header row but no sentences")])
    at = {name: header.index(name) for name in COLUMNS}
    # (row index, message, row index of an earlier row it names); made lines only on refusal (_row_lines).
    issues: list[tuple[int, str, int | None]] = []
    first_row: dict[str, int] = {}
    label: dict[str, int] = {}
    group: dict[str, tuple[str, str]] = {}
    relevant: dict[str, frozenset[str]] = {}
    for index, row in enumerate(rows[1:], start=1):
        if len(row) != len(header):
            issues.append(
                (index, f"has {len(row)} tab-separated fields; expected {len(header)} as in the header", None)
            )
            continue
        uuid, is_variable = row[at["uuid"]].strip(), row[at["is_variable"]].strip()
        lang, doc_id = row[at["lang"]].strip(), row[at["doc_id"]].strip()
        problems = _row_problems(uuid, is_variable, lang, doc_id)
        issues.extend((index, message, None) for message in problems)
        if uuid in first_row:
            issues.append((index, f"uuid {show(uuid)} is repeated; uuids must be unique", first_row[uuid]))
            continue
        if uuid:
            first_row[uuid] = index
        if problems:
            continue
        label[uuid] = int(is_variable)
        group[uuid] = (lang, doc_id)
        variables = frozenset(v.strip() for v in row[at["variable"]].split(";")) - {"", UNKNOWN_VARIABLE}
        if is_variable == "1" and variables:
            relevant[uuid] = variables
    if issues:
        _refuse(data, issues)
    return SvIdentGold(label, group, relevant)


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


def _refuse(data: bytes, issues: list[tuple[int, str, int | None]]) -> None:
    lines = _row_lines(data)
    problems = Problems(InvalidGold)
    for index, message, earlier in issues:
        problems.add(
            f"line {lines[index]}", message if earlier is None else f"{message} (first on line {lines[earlier]})"
        )
    problems.raise_if_any()


def _row_lines(data: bytes) -> list[int]:
    """The line on which each non-empty row of the TSV starts.

    ``read_tsv`` returns rows without their place, and a quoted field may span lines, so the lines are
    found again with the same reader settings; this runs only when the gold is being refused.
    """
    reader = csv.reader(
        io.StringIO(decode_text(data, InvalidGold), newline=""), delimiter="\t", quotechar='"', strict=True
    )
    starts, start = [], 1
    for row in reader:
        if row:
            starts.append(start)
        start = reader.line_num + 1
    return starts


# -- submissions ----------------------------------------------------------------------------------


def _top_object(data: bytes, shape: str) -> dict[str, Any]:
    value = load_json(data, InvalidSubmission)
    if not isinstance(value, dict):
        raise InvalidSubmission([Problem("top level", f"expected one JSON object {shape}, not {_kind(value)}")])
    return value


def parse_labels(data: bytes, gold: SvIdentGold) -> dict[str, int]:
    """Task 1: ``{uuid: label}`` with a label "0"/"1" or 0/1 for every gold uuid and nothing else."""
    submitted = _top_object(data, '{uuid: label} with labels "0"/"1" or 0/1')
    problems = Problems(InvalidSubmission)
    labels: dict[str, int] = {}
    for key, value in submitted.items():
        if key not in gold.label:
            problems.add(where(key), "is not a uuid of a gold sentence")
        elif type(value) is str and value in ("0", "1"):
            labels[key] = int(value)
        elif type(value) is int and value in (0, 1):
            labels[key] = value
        else:
            problems.add(where(key), f"label {show(value)} is not one of {LABEL_VALUES}")
    _missing(gold.label, submitted, problems, f"every gold sentence needs a label ({LABEL_VALUES})")
    problems.raise_if_any()
    return labels


def parse_run(
    data: bytes,
    gold: SvIdentGold,
    cutoffs: Collection[int],
    *,
    require_queries: bool,
    limits: RunLimits = RunLimits(),
) -> dict[str, dict[str, float]]:
    """Task 2: ``{uuid: {variable_id: score}}`` with finite number scores; returns the queries' lists.

    Lists of gold sentences that are not queries are validated, then dropped. Each query's list is
    pruned to the candidates that can reach the depth its measures look at (``ranking.prune``), so a
    huge run is not held in memory longer than its parsing takes.
    """
    submitted = _top_object(data, "{uuid: {variable_id: score}}")
    total = sum(len(candidates) for candidates in submitted.values() if isinstance(candidates, dict))
    if total > limits.candidates:
        raise InvalidSubmission([Problem("top level", limits.exceeded("candidates", total, "candidates in all"))])
    problems = Problems(InvalidSubmission)
    run: dict[str, dict[str, float]] = {}
    for key, candidates in submitted.items():
        if key not in gold.label:
            problems.add(where(key), "is not a uuid of a gold sentence")
        elif not isinstance(candidates, dict):
            problems.add(where(key), f"expected an object {{variable_id: score}}, not {_kind(candidates)}")
        elif len(candidates) > limits.candidates_per_query:
            problems.add(where(key), limits.exceeded("candidates_per_query", len(candidates), "candidates"))
        elif (
            _check_variables(key, candidates, limits, problems)
            and _check_scores(key, candidates, problems)
            and not problems
            and key in gold.relevant
        ):
            run[key] = ranking.prune(candidates, ranking.depth(cutoffs, len(gold.relevant[key])))
    if require_queries:
        _missing(
            gold.relevant,
            submitted,
            problems,
            "it is a query (is_variable 1 with a variable other than unk) and needs a candidate object ({} for none)",
        )
    problems.raise_if_any()
    return run


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
    """True when every score is a JSON number that is finite as a double (NaN and 1e999 never parse)."""
    types = set(map(type, candidates.values()))
    if types <= {float}:  # the common case, checked without a Python loop over the candidates
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
            continue
        else:
            message = "is not a JSON number (numeric strings and true/false are not scores)"
        problems.add(f"{where(key)}, variable {show(variable)}", f"score {show(score)} {message}")
        ok = False
    return ok


def _missing(expected: Collection[str], submitted: dict[str, Any], problems: Problems, why: str) -> None:
    for uuid in expected:
        if uuid not in submitted:
            problems.add(where(uuid), f"is missing: {why}")
