"""A tiny scorer for the application's tests: gold and submission are JSON objects ``{id: label}``.

``accuracy`` is the share of gold ids labelled as in the gold. Participants are given the ids (the public
view, ``PublicIds``), never the labels. The option ``crash`` makes scoring raise after validation passed,
as a broken scorer would (a failure the platform causes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scorers import InvalidGold, InvalidSubmission, MetricSpec, OptionSpec, Problem, PublicIds, Scorer, UnitStats
from scorers.io import json_bytes, load_json

NAME = "test-labels"


class LabelScorer(Scorer[dict[str, str], PublicIds, dict[str, str]]):
    name = NAME
    version = "1.0"
    title = "Labels (tests only)"
    primary_metric = "accuracy"
    metrics = (MetricSpec("accuracy", "share of ids with the gold label"),)
    options = (OptionSpec("crash", False, "raise while computing"),)
    gold_format = "JSON object {id: label}"
    submission_format = "JSON object {id: label}"

    def parse_gold(self, data: bytes) -> dict[str, str]:
        gold = load_json(data, InvalidGold)
        if not isinstance(gold, dict) or not all(isinstance(v, str) for v in gold.values()):
            raise InvalidGold([Problem("", "expected a JSON object of string labels")])
        return gold

    def public_view(self, gold: dict[str, str]) -> PublicIds:
        return PublicIds.of(gold)

    def parse_submission(self, data: bytes, public: PublicIds) -> dict[str, str]:
        run = load_json(data, InvalidSubmission)
        if not isinstance(run, dict):
            raise InvalidSubmission([Problem("", "expected a JSON object {id: label}")])
        problems = [Problem(f"key {k!r}", "is not in the gold") for k in run if k not in public.known]
        problems += [Problem(f"key {k!r}", "is missing") for k in public.ids if k not in run]
        problems += [Problem(f"key {k!r}", "label must be a string") for k, v in run.items() if not isinstance(v, str)]
        if problems:
            raise InvalidSubmission(problems)
        return run

    def sample_submission(self, public: PublicIds) -> bytes:
        return json_bytes(dict.fromkeys(public.ids, "0"))

    def unit_stats(self, gold: dict[str, str], submission: dict[str, str]) -> dict[str, UnitStats]:
        if self.config["crash"]:
            raise RuntimeError("the scorer exploded")
        return {key: {"correct": int(submission[key] == label)} for key, label in gold.items()}

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, Any]:
        return {"accuracy": sum(s["correct"] for s in stats) / len(stats) if stats else 0.0}
