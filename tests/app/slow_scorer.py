"""A deliberately slow scorer for the tests of crashed and interrupted workers: the labels scorer of
``labels_scorer``, sleeping ``seconds`` (an option of the task) before it computes."""

from __future__ import annotations

import time
from typing import Any

from scorers import OptionSpec, UnitStats
from tests.app.labels_scorer import LabelScorer

NAME = "test-slow"


class SlowScorer(LabelScorer):
    name = NAME
    title = "Slow labels (tests only)"
    options = (*LabelScorer.options, OptionSpec("seconds", 0.0, "sleep this long before computing"))

    def unit_stats(self, gold: dict[str, str], submission: dict[str, str]) -> dict[str, UnitStats]:
        seconds: Any = self.config["seconds"]
        time.sleep(float(seconds))
        return super().unit_stats(gold, submission)
