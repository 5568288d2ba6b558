"""``PODIUM_PLUGINS=tests.app.plugins.labels``: registers the tests' scorers (``test-labels`` and the
deliberately slow ``test-slow``) and their baseline system (``test-labels-copy``) in the process that
imports it, as any plugin registers its own. The workers and servers the tests start load it.
"""

from __future__ import annotations

import baselines
import scorers
from tests.app.labels_baselines import LabelsCopy
from tests.app.labels_scorer import LabelScorer
from tests.app.slow_scorer import SlowScorer

for _scorer in (LabelScorer, SlowScorer):
    if _scorer.name not in scorers.scorer_names():
        scorers.register(_scorer)
if LabelsCopy.name not in baselines.baseline_names():
    baselines.register(LabelsCopy)
