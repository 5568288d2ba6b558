"""Hosted baseline systems: task inputs in, a submission in the task's format out (pure).

Importing the package registers the seed systems (``baselines/systems``) without importing
their heavy libraries; those load when a system runs.
"""

from baselines import systems as _systems  # noqa: F401  (registers the seed systems)
from baselines.base import Baseline, BaselineInputs, LogFn, ProgressFn, RunContext, StopFn
from baselines.errors import BadOptions, BaselineError, Cancelled, InvalidInputs, UnknownBaseline
from baselines.registry import (
    all_baselines,
    baseline_class,
    baseline_names,
    baselines_for,
    get_baseline,
    register,
    unregister,
)

__all__ = [
    "BadOptions",
    "Baseline",
    "BaselineError",
    "BaselineInputs",
    "Cancelled",
    "InvalidInputs",
    "LogFn",
    "ProgressFn",
    "RunContext",
    "StopFn",
    "UnknownBaseline",
    "all_baselines",
    "baseline_class",
    "baseline_names",
    "baselines_for",
    "get_baseline",
    "register",
    "unregister",
]
