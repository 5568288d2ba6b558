"""A deliberately slow scorer for the tests of crashed and interrupted workers: the labels scorer of
``labels_scorer``, sleeping ``seconds`` (an option of the task) before it computes, and
``parse_seconds`` before it reads a submission (so an upload is still being checked for a while)."""

from __future__ import annotations

import time
from typing import Any

from scorers import OptionSpec, PublicIds, UnitStats
from tests.app.labels_scorer import LabelScorer

NAME = "test-slow"


class SlowScorer(LabelScorer):
    name = NAME
    title = "Slow labels (tests only)"
    options = (
        *LabelScorer.options,
        OptionSpec("seconds", 0.0, "sleep this long before computing"),
        OptionSpec("parse_seconds", 0.0, "sleep this long before reading a submission (at upload too)"),
    )

    def parse_submission(self, data: bytes, public: PublicIds) -> dict[str, str]:
        seconds: Any = self.config["parse_seconds"]
        time.sleep(float(seconds))
        return super().parse_submission(data, public)

    def unit_stats(self, gold: dict[str, str], submission: dict[str, str]) -> dict[str, UnitStats]:
        seconds: Any = self.config["seconds"]
        time.sleep(float(seconds))
        return super().unit_stats(gold, submission)
