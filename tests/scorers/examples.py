"""The example bundles of ``examples/`` as (scorer, options, gold) cases: every registered scorer has one.

Tests that must drive every scorer through real data (its sample submission, the per-document exports) take
their gold and options from here, so a new scorer is covered once it has an example competition.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@dataclass(frozen=True)
class ExamplePhase:
    bundle: Path
    competition: str
    task: str
    phase: str
    scorer: str
    options: dict[str, Any]
    gold: bytes


def example_phases() -> dict[str, ExamplePhase]:
    """The first phase of an example task for each scorer the examples use (open competitions only)."""
    found: dict[str, ExamplePhase] = {}
    for bundle in sorted(EXAMPLES.glob("*/competition.yaml")):
        document = yaml.safe_load(bundle.read_text(encoding="utf-8"))
        if document.get("participation", "open") != "open":
            continue
        for task in document["tasks"]:
            phase = task["phases"][0]
            found.setdefault(
                task["scorer"],
                ExamplePhase(
                    bundle,
                    document["slug"],
                    task["slug"],
                    phase["slug"],
                    task["scorer"],
                    dict(task.get("scorer_options") or {}),
                    (bundle.parent / phase["gold"]["path"]).read_bytes(),
                ),
            )
    return found
