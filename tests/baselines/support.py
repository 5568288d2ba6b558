"""Builders shared by the baseline tests: run a system, score its output, trivial submissions, data slices."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baselines import BaselineInputs, get_baseline
from scorers import get_scorer
from scorers.inputs import participant_inputs
from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"


@dataclass
class Recorder:
    """Collects what a run reports, and can ask it to stop after ``stop_after`` progress reports."""

    stop_after: int | None = None
    progress: list[tuple[int, int]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def on_progress(self, done: int, total: int) -> None:
        self.progress.append((done, total))

    def should_stop(self) -> bool:
        return self.stop_after is not None and len(self.progress) >= self.stop_after


def run(
    name: str,
    scorer: str,
    gold: bytes,
    training: Mapping[str, bytes] | None = None,
    resources: Mapping[str, bytes] | None = None,
    options: Mapping[str, Any] | None = None,
    extra_inputs: Mapping[str, bytes] | None = None,
    recorder: Recorder | None = None,
) -> bytes:
    """Run a baseline on the participant inputs derived from ``gold``, as the platform would."""
    filename, data = participant_inputs(scorer, gold)
    inputs = BaselineInputs(
        scorer, dict(training or {}), {filename: data, **(extra_inputs or {})}, dict(resources or {})
    )
    recorder = recorder or Recorder()
    return get_baseline(name, options).run(inputs, recorder.on_progress, recorder.lines.append, recorder.should_stop)


def score(scorer: str, gold: bytes, submission: bytes) -> dict[str, float]:
    """The metrics of a submission; ``parse_submission`` refuses it if it is malformed."""
    engine = get_scorer(scorer)
    parsed_gold = engine.parse_gold(gold)
    return engine.compute(parsed_gold, engine.parse_submission(submission, engine.public_view(parsed_gold))).metrics


def primary(scorer: str) -> str:
    return get_scorer(scorer).primary_metric


def trivial(scorer: str, gold: bytes) -> bytes:
    """The submission that says nothing: all zeros, empty rankings, empty lists."""
    _, data = participant_inputs(scorer, gold)
    if scorer.startswith("svident"):
        rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline=""), delimiter="\t"))
        empty: object = "0" if scorer == "svident-detection" else {}
        return json.dumps({row["uuid"]: empty for row in rows}).encode()
    lines = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
    if scorer == "famus-sv":
        return json.dumps({line["instance_id"]: 0 for line in lines}).encode()
    if scorer == "famus-cdae":
        return json.dumps({line["docid"]: [] for line in lines}).encode()
    keys = ("predicted_ner", "predicted_relations") if scorer == "scier-ere" else ("predicted_relations",)
    out = [{"doc_id": line["doc_id"], **{key: [[] for _ in line["sentences"]] for key in keys}} for line in lines]
    return "\n".join(json.dumps(line) for line in out).encode()


def tsv_slice(path: Path, rows: Sequence[int] | slice) -> bytes:
    """The header and the chosen rows of a release TSV, quoted as the release is."""
    with path.open(encoding="utf-8", newline="") as handle:
        table = list(csv.reader(handle, delimiter="\t"))
    body = table[1:]
    chosen = body[rows] if isinstance(rows, slice) else [body[i] for i in rows]
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerows([table[0], *chosen])
    return out.getvalue().encode("utf-8")


def tsv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def lines_slice(path: Path, count: int, start: int = 0) -> bytes:
    lines = [line for line in path.read_bytes().splitlines(keepends=True) if line.strip()]
    return b"".join(lines[start : start + count])
