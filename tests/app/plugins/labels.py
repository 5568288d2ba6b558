"""``PODIUM_PLUGINS=tests.app.plugins.labels``: registers the test scorers (``test-labels`` and the
deliberately slow ``test-slow``) in the process that imports it, as any plugin registers its scorers.
Worker processes started by the tests load it, so they score the tests' competitions."""

from __future__ import annotations

from scorers import register, scorer_names
from tests.app.labels_scorer import LabelScorer
from tests.app.slow_scorer import SlowScorer

for _scorer in (LabelScorer, SlowScorer):
    if _scorer.name not in scorer_names():
        register(_scorer)
