"""Participant inputs: the file people predict on, derived from a phase's gold by removing the answers.

``participant_inputs(scorer, gold)`` returns ``(file name, bytes)``. One format per seed scorer:

- ``svident-detection``, ``svident-disambiguation``: the release TSV without ``is_variable`` and
  ``variable`` (columns ``sentence, research_data, doc_id, uuid, lang``), quoted as the release is.
  ``research_data`` lists the studies of the sentence's whole document (in order of first mention):
  the release fills it only for sentences that mention a variable, so copying it row by row would
  give the detection answer away.
- ``scier-ere``: JSON lines ``{"doc_id", "sentences"}``; ``scier-re`` adds the gold ``ner`` (RE is
  given the entities).
- ``famus-cdae``: JSON lines ``{"docid", "incident_type", "roles"}``, the roles of the gold template
  sorted by name. Templates of one document that name different frames cannot be described by one
  line and are refused; a document without templates gets ``incident_type`` null and no roles.
- ``famus-sv``: the release lines without ``valid_source`` and ``bool_generated``.

Rows and lines keep the gold's order, one per gold row or line, with the gold's ids. Only what the
derivation needs is checked here; the task's scorer validates the gold in full.

``rename_ids(scorer, gold, rename)`` gives a gold whose ids are replaced, for releases whose ids or order
give the answers away (FAMuS source validation: the valid pairs are ``EN-...-frame-...``, the invalid ones
``report-...-source-...``, and every invalid pair comes before every valid one). Its lines are sorted by
their new ids, so with ids that say nothing (a keyed hash) the order says nothing either; the inputs
derived from it then carry only the new ids.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from scorers.errors import InvalidGold, Problem, Problems, UnknownScorer
from scorers.io import gc_paused, iter_json_lines, read_tsv

SVIDENT_INPUT_COLUMNS = ("sentence", "research_data", "doc_id", "uuid", "lang")
SVIDENT_ANSWER_COLUMNS = ("is_variable", "variable")
SV_ANSWER_KEYS = ("valid_source", "bool_generated")
#: Keys of an IterX template that are not roles.
CDAE_NON_ROLES = ("incident_type", "template-spans")


def _tsv_field(value: str) -> str:
    # Written by hand because Python 3.11's csv writer leaves a bare carriage return unquoted when
    # lines end in "\n", which a reader would then take for a line break.
    if any(c in value for c in '\t"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def _svident(gold: bytes) -> tuple[str, bytes]:
    rows = read_tsv(gold, InvalidGold)
    if not rows:
        raise InvalidGold([Problem("", "the file is empty; expected a header row and one row per sentence")])
    header = rows[0]
    missing = [name for name in (*SVIDENT_INPUT_COLUMNS, *SVIDENT_ANSWER_COLUMNS) if name not in header]
    if missing:
        raise InvalidGold([Problem("line 1", f"the header lacks the column(s) {', '.join(missing)}")])
    column = {name: header.index(name) for name in SVIDENT_INPUT_COLUMNS}
    problems = Problems(InvalidGold)
    records: list[dict[str, str]] = []
    studies: dict[str, dict[str, None]] = {}  # doc_id -> study ids in order of first mention
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            problems.add(f"row {number}", f"has {len(row)} fields; the header names {len(header)}")
            continue
        record = {name: row[i] for name, i in column.items()}
        records.append(record)
        found = studies.setdefault(record["doc_id"], {})
        found.update(dict.fromkeys(s for s in record["research_data"].split(";") if s))
    problems.raise_if_any()
    lines = ["\t".join(SVIDENT_INPUT_COLUMNS)]
    for record in records:
        record["research_data"] = ";".join(studies[record["doc_id"]])
        lines.append("\t".join(_tsv_field(record[name]) for name in SVIDENT_INPUT_COLUMNS))
    return "inputs.tsv", ("\n".join(lines) + "\n").encode("utf-8")


def _objects(gold: bytes, problems: Problems, id_key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The gold's JSON objects that carry a string ``id_key``; everything else goes to ``problems``."""
    for number, value in iter_json_lines(gold, problems, InvalidGold):
        if not isinstance(value, dict):
            problems.add(f"line {number}", f"expected a JSON object, found {type(value).__name__}")
        elif not isinstance(value.get(id_key), str):
            problems.add(f"line {number}", f"expected a string {id_key!r}")
        else:
            yield number, value


def _json_lines(objects: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(obj, ensure_ascii=False) + "\n" for obj in objects).encode("utf-8")


def _scier(gold: bytes, keys: tuple[str, ...]) -> tuple[str, bytes]:
    problems = Problems(InvalidGold)
    out = []
    for number, doc in _objects(gold, problems, "doc_id"):
        absent = [key for key in keys if not isinstance(doc.get(key), list)]
        if absent:
            problems.add(f"line {number}", f"expected a list under {', '.join(map(repr, absent))}")
            continue
        out.append({key: doc[key] for key in ("doc_id", *keys)})
    problems.raise_if_any()
    return "inputs.jsonl", _json_lines(out)


def _famus_cdae(gold: bytes) -> tuple[str, bytes]:
    problems = Problems(InvalidGold)
    out = []
    for number, doc in _objects(gold, problems, "docid"):
        templates = doc.get("templates")
        if not isinstance(templates, list) or not all(isinstance(t, dict) for t in templates):
            problems.add(f"line {number}", "expected 'templates' to be a list of objects")
            continue
        frames = sorted({str(t.get("incident_type")) for t in templates})
        if len(frames) > 1:
            problems.add(
                f"line {number}",
                f"the templates name several frames ({', '.join(frames)}); the inputs format has one per document",
            )
            continue
        roles = sorted({key for t in templates for key in t if key not in CDAE_NON_ROLES})
        frame = templates[0].get("incident_type") if templates else None
        out.append({"docid": doc["docid"], "incident_type": frame, "roles": roles})
    problems.raise_if_any()
    return "inputs.jsonl", _json_lines(out)


def _famus_sv(gold: bytes) -> tuple[str, bytes]:
    problems = Problems(InvalidGold)
    out = [
        {key: value for key, value in line.items() if key not in SV_ANSWER_KEYS}
        for _, line in _objects(gold, problems, "instance_id")
    ]
    problems.raise_if_any()
    return "inputs.jsonl", _json_lines(out)


_FORMATS: dict[str, Callable[[bytes], tuple[str, bytes]]] = {
    "svident-detection": _svident,
    "svident-disambiguation": _svident,
    "scier-ere": lambda gold: _scier(gold, ("sentences",)),
    "scier-re": lambda gold: _scier(gold, ("sentences", "ner")),
    "famus-cdae": _famus_cdae,
    "famus-sv": _famus_sv,
}


def input_formats() -> list[str]:
    """Names of the scorers whose participant inputs can be derived from the gold."""
    return sorted(_FORMATS)


def participant_inputs(scorer: str, gold: bytes) -> tuple[str, bytes]:
    """The inputs file for ``scorer``'s gold: ``(file name, bytes)``; raises ``InvalidGold`` or ``UnknownScorer``."""
    derive = _FORMATS.get(scorer)
    if derive is None:
        known = ", ".join(input_formats())
        raise UnknownScorer(f"no participant inputs format is defined for scorer {scorer!r}; defined for: {known}")
    with gc_paused():  # many small containers, no cycles: see scorers.io.gc_paused
        return derive(gold)


#: The id of a line, for the formats of one object per line whose ids ``rename_ids`` can replace.
ID_KEYS = {"famus-sv": "instance_id", "famus-cdae": "docid", "scier-ere": "doc_id", "scier-re": "doc_id"}


def renamable_formats() -> list[str]:
    """Names of the scorers whose gold ids ``rename_ids`` can replace."""
    return sorted(ID_KEYS)


def rename_ids(scorer: str, gold: bytes, rename: Callable[[str], str]) -> bytes:
    """``gold`` with each line's id replaced by ``rename(id)``, the lines sorted by their new ids, the rest
    of each line kept. Raises ``UnknownScorer`` for a format without renamable ids, and ``InvalidGold`` for
    a line without its id or two lines that would share one."""
    key = ID_KEYS.get(scorer)
    if key is None:
        known = ", ".join(renamable_formats())
        raise UnknownScorer(f"the ids of scorer {scorer!r} cannot be renamed; they can for: {known}")
    problems = Problems(InvalidGold)
    renamed: dict[str, dict[str, Any]] = {}
    with gc_paused():
        for number, line in _objects(gold, problems, key):
            new = rename(line[key])
            if new in renamed:
                problems.add(f"line {number}", f"its {key} is given to an earlier line too")
                continue
            line[key] = new
            renamed[new] = line
        problems.raise_if_any()
        return _json_lines([renamed[new] for new in sorted(renamed)])
