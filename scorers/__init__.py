"""Podium's scorer library: pure functions from gold and submission bytes to metrics.

Nothing here knows HTTP, SQL or queues, so the same code scores on the server, in a worker and on
a participant's laptop (``podium score``). Importing the package imports no scorer: the registry imports a
scorer's module when the scorer is first asked for (``scorers.registry.BUILT_IN``).
"""

from scorers.base import MetricSpec, OptionSpec, PublicIds, Scorer, ScoreReport, UnitStats
from scorers.description import ScorerDescription
from scorers.errors import (
    InvalidGold,
    InvalidSubmission,
    NoSample,
    OptionsError,
    Problem,
    ScorerError,
    UnknownScorer,
    ValidationError,
)
from scorers.io import unpack_submission
from scorers.registry import all_scorers, get_scorer, register, scorer_class, scorer_names, unregister

__all__ = [
    "InvalidGold",
    "InvalidSubmission",
    "MetricSpec",
    "NoSample",
    "OptionSpec",
    "OptionsError",
    "Problem",
    "PublicIds",
    "ScoreReport",
    "Scorer",
    "ScorerDescription",
    "ScorerError",
    "UnitStats",
    "UnknownScorer",
    "ValidationError",
    "all_scorers",
    "get_scorer",
    "register",
    "scorer_class",
    "scorer_names",
    "unpack_submission",
    "unregister",
]
