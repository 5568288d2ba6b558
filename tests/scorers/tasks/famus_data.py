"""Small FAMuS gold files and submissions shared by the FAMuS tests (arithmetic in the tests)."""

from __future__ import annotations

import json
from typing import Any

from scorers.errors import ValidationError
from scorers.registry import get_scorer


def jsonl(*lines: Any) -> bytes:
    return "\n".join(json.dumps(line) for line in lines).encode()


def as_json(value: Any) -> bytes:
    return json.dumps(value).encode()


def problems(error: ValidationError) -> list[str]:
    return [str(problem) for problem in error.problems]


PAUSE: dict[str, Any] = {
    "incident_type": "Pause",
    "Place": [],
    "Time": [[["April 24 , 2009", 30, 44, 4, 7, "Time"]]],
    "Agent": [[["the airline"]]],
    "Activity": [[["all of its operations"]]],
    "template-spans": [2, 3, 4],
}
GOLD: list[dict[str, Any]] = [
    # the template is listed twice and counts once: 3 gold mentions
    {"docid": "A", "templates": [PAUSE, PAUSE]},
    # no gold template and nothing predicted: the empty-document rule adds 1 to every sum
    {"docid": "B", "templates": []},
    # left out of the submission: its gold mention only counts in recall
    {"docid": "C", "templates": [{"incident_type": "Stop", "Agent": [[["Microsoft"]], []]}]},
]
SUBMISSION: dict[str, Any] = {
    "A": [
        {
            "incident_type": "Pause",
            "Time": [["April 24 , 2009"]],
            "Agent": ["the airline"],  # a bare string is the whole text
            "Activity": [["operations", 5, 6]],  # offsets after the text are ignored
            "Invented": [["x"]],
        }
    ],
    "B": [],
}


def cdae(options: dict[str, Any] | None = None) -> Any:
    return get_scorer("famus-cdae", options)


SV_GOLD: list[dict[str, Any]] = [
    {"instance_id": "i1", "frame": "Cure", "valid_source": True, "bool_generated": False},
    {"instance_id": "i2", "frame": "Cure", "valid_source": False, "bool_generated": True},
    {"instance_id": "i3", "frame": "Kidnapping", "valid_source": True},
    {"instance_id": "i4", "valid_source": False},
]


def sv() -> Any:
    return get_scorer("famus-sv")
