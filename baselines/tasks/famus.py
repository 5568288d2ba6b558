"""FAMuS files as the baselines read them: source-validation lines, CDAE inputs and IterX gold.

Source-validation inputs are the release lines without their labels: ``instance_id``, ``frame``,
``report_dict`` (with ``frame-trigger-span``, whose first element is the trigger text) and
``source_dict`` (with ``doctext``). CDAE inputs are ``{"docid", "incident_type", "roles"}`` lines.
IterX gold lines are ``{"docid", "templates": [{"incident_type", role: [[mention, ...], ...]}]}``,
each mention a list whose first element is its text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from baselines.errors import InvalidInputs
from baselines.io import describe_files, first_line, json_objects, pick_file

#: Bookkeeping in IterX templates, not a role.
TEMPLATE_SPANS = "template-spans"


@dataclass(frozen=True)
class SourcePair:
    """One source-validation instance: the report's trigger text and the candidate source's text."""

    instance_id: str
    trigger: str
    source_text: str


@dataclass(frozen=True)
class CdaeItem:
    docid: str
    incident_type: str | None
    roles: tuple[str, ...]


def _unique_id(label: str, number: int, value: Any, key: str, seen: set[str]) -> str:
    if not isinstance(value, str) or not value or value in seen:
        state = "repeated" if value in seen else "not a non-empty string"
        raise InvalidInputs(f"{label}, line {number}: {key} {value!r} is {state}")
    seen.add(value)
    return value


def _looks_like_pairs(data: bytes) -> bool:
    line = first_line(data)
    return b'"instance_id"' in line and b'"source_dict"' in line


def _looks_like_cdae_items(data: bytes) -> bool:
    line = first_line(data)
    return b'"docid"' in line and b'"incident_type"' in line and b'"templates"' not in line


def read_source_pairs(files: Mapping[str, bytes]) -> list[SourcePair]:
    name, data = pick_file(files, "public inputs", (".jsonl",), _looks_like_pairs)
    label = f"input file {name!r}"
    pairs: list[SourcePair] = []
    seen: set[str] = set()
    for number, line in json_objects(label, data, ("instance_id", "report_dict", "source_dict")):
        instance_id = _unique_id(label, number, line["instance_id"], "instance_id", seen)
        report, source = line["report_dict"], line["source_dict"]
        span = report.get("frame-trigger-span") if isinstance(report, dict) else None
        text = source.get("doctext") if isinstance(source, dict) else None
        if not isinstance(span, list) or not span or not isinstance(span[0], str):
            raise InvalidInputs(
                f"{label}, line {number}: report_dict.frame-trigger-span must be a list whose first element is "
                "the trigger text"
            )
        if not isinstance(text, str):
            raise InvalidInputs(f"{label}, line {number}: source_dict.doctext must be a string")
        pairs.append(SourcePair(instance_id, span[0], text))
    return pairs


def read_cdae_items(files: Mapping[str, bytes]) -> list[CdaeItem]:
    name, data = pick_file(files, "public inputs", (".jsonl",), _looks_like_cdae_items)
    label = f"input file {name!r}"
    items: list[CdaeItem] = []
    seen: set[str] = set()
    for number, line in json_objects(label, data, ("docid", "incident_type")):
        docid = _unique_id(label, number, line["docid"], "docid", seen)
        frame, roles = line["incident_type"], line.get("roles", [])
        # A gold document without templates has no frame (null) and no roles.
        if not (frame is None or isinstance(frame, str)) or not (
            isinstance(roles, list) and all(isinstance(r, str) for r in roles)
        ):
            raise InvalidInputs(f"{label}, line {number}: expected incident_type as a string or null, roles as strings")
        items.append(CdaeItem(docid, frame, tuple(roles)))
    return items


def _check_template(label: str, number: int, template: Any) -> dict[str, Any]:
    if not isinstance(template, dict) or not isinstance(template.get("incident_type"), str):
        raise InvalidInputs(f"{label}, line {number}: each template must be an object with a string incident_type")
    for role, entities in template.items():
        if role in ("incident_type", TEMPLATE_SPANS):
            continue
        if not isinstance(entities, list) or not all(
            isinstance(e, list) and e and all(isinstance(m, list) and m and isinstance(m[0], str) for m in e)
            for e in entities
        ):
            raise InvalidInputs(
                f"{label}, line {number}, role {role!r}: expected a list of entities, each a non-empty list of "
                "mentions whose first element is the text"
            )
    return template


def read_iterx_gold(label: str, data: bytes) -> dict[str, list[dict[str, Any]]]:
    """Templates by docid from IterX gold lines."""
    documents: dict[str, list[dict[str, Any]]] = {}
    seen: set[str] = set()
    for number, line in json_objects(label, data, ("docid", "templates")):
        docid = _unique_id(label, number, line["docid"], "docid", seen)
        templates = line["templates"]
        if not isinstance(templates, list):
            raise InvalidInputs(f"{label}, line {number}: templates must be a list")
        documents[docid] = [_check_template(label, number, t) for t in templates]
    return documents


def is_iterx_gold(data: bytes) -> bool:
    """Whether a file's first line looks like an IterX gold line (has docid and templates)."""
    line = first_line(data)
    return b'"templates"' in line and b'"docid"' in line


def pick_iterx_resource(files: Mapping[str, bytes], wanted: str) -> tuple[str, bytes]:
    """The resource named ``wanted``, or, when it is empty, the only IterX gold file among the resources."""
    if wanted:
        if wanted not in files:
            raise InvalidInputs(f"resource {wanted!r} not found (resources: {describe_files(files)})")
        return wanted, files[wanted]
    fitting = sorted(name for name, data in files.items() if name.lower().endswith(".jsonl") and is_iterx_gold(data))
    if len(fitting) != 1:
        found = "none" if not fitting else "several: " + ", ".join(repr(n) for n in fitting)
        raise InvalidInputs(
            "expected exactly one IterX gold file (JSON Lines with docid and templates) among the resources, "
            f"or the option report_gold naming one; found {found} (resources: {describe_files(files)})"
        )
    return fitting[0], files[fitting[0]]
