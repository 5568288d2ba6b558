"""Errors raised by the baseline library.

Hierarchy::

    BaselineError           anything a baseline refuses to run on
    ├── InvalidInputs       training data, public inputs or resources that cannot be used
    ├── BadOptions          options that are unknown or of the wrong type
    └── UnknownBaseline     a name that is not in the registry
    Cancelled               the run was stopped on request (not a failure of the inputs)

Messages name the file and the place in it (line, key) and say what was expected, so that an
organizer can fix a task's data without reading the baseline's code.
"""

from __future__ import annotations


class BaselineError(Exception):
    """Base class of every refusal the baseline library raises."""


class InvalidInputs(BaselineError):
    """Training files, public inputs or resources that a baseline cannot use."""


class BadOptions(BaselineError):
    """Baseline options that are unknown or have the wrong type."""


class UnknownBaseline(BaselineError):
    """A baseline name that is not in the registry."""


class Cancelled(Exception):
    """Raised inside ``run`` when ``should_stop`` answers true; nothing is returned."""
