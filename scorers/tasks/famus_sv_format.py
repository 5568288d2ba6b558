"""Reading FAMuS source validation: release lines (gold) and ``{instance_id: label}`` (submissions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scorers.base import PublicIds
from scorers.errors import InvalidGold, InvalidSubmission, Problem, Problems
from scorers.io import gc_paused, iter_json_lines, load_json
from scorers.tasks.famus_format import quote, show


@dataclass(frozen=True)
class SvGold:
    """Gold label (1 = valid source) per instance_id, and the frame of the instances that name one."""

    labels: dict[str, int]
    frames: dict[str, str]


def _label(value: Any) -> int | None:
    """1 or 0 for JSON true/false or the integers 1/0; None for anything else ("1", 1.0, 2, null)."""
    if isinstance(value, bool):
        return int(value)
    if type(value) is int and value in (0, 1):
        return value
    return None


@gc_paused()
def parse_sv_gold(data: bytes) -> SvGold:
    """Read source-validation release lines; raise ``InvalidGold`` listing the problems."""
    problems = Problems(InvalidGold)
    labels: dict[str, int] = {}
    frames: dict[str, str] = {}
    for number, line in iter_json_lines(data, problems, InvalidGold):
        where = f"line {number}"
        if not isinstance(line, dict):
            problems.add(where, 'expected an object with "instance_id" and "valid_source"')
            continue
        instance, label, frame = line.get("instance_id"), _label(line.get("valid_source")), line.get("frame")
        if not isinstance(instance, str):
            problems.add(where, 'key "instance_id" must be a string')
        elif instance in labels:
            problems.add(where, f"instance_id {quote(instance)} appears more than once in the gold")
        elif label is None:
            problems.add(where, 'key "valid_source" must be true or false (or 1 or 0)')
        elif frame is not None and not isinstance(frame, str):
            problems.add(where, 'key "frame" must be a string when present')
        else:
            labels[instance] = label
            if frame is not None:
                frames[instance] = frame
    problems.raise_if_any()
    return SvGold(labels, frames)


@gc_paused()
def parse_sv_submission(data: bytes, public: PublicIds) -> dict[str, int]:
    """Read ``{instance_id: label}``; every gold id exactly once, labels 0/1/true/false."""
    raw = load_json(data, InvalidSubmission)
    if not isinstance(raw, dict):
        got = "a list (labels are matched by id, not by position)" if isinstance(raw, list) else show(raw)
        raise InvalidSubmission([Problem("", f"expected a JSON object mapping each instance_id to 0 or 1; got {got}")])
    problems = Problems(InvalidSubmission)
    labels: dict[str, int] = {}
    for instance, value in raw.items():
        where = f"key {quote(instance)}"
        label = _label(value)
        if instance not in public.known:
            problems.add(where, "is not an instance_id of the gold")
        elif label is None:
            problems.add(where, f"the label must be 0, 1, true or false, not {show(value)}")
        else:
            labels[instance] = label
    for instance in public.ids:
        if instance not in raw:
            problems.add(f"key {quote(instance)}", "this gold instance_id has no label in the submission")
    problems.raise_if_any()
    return labels
