"""The registry of baseline systems, keyed by name.

System modules register their classes with ``@register`` (held in a ``scorers.registry.Registry``, as
the scorers are); ``baselines/systems/__init__.py`` imports every module in that package, so importing
``baselines`` fills the registry. Tests may register extra systems and remove them with ``unregister``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from baselines.base import Baseline
from baselines.errors import UnknownBaseline
from scorers.registry import Registry

_BASELINES: Registry[type[Baseline]] = Registry("baseline", UnknownBaseline)

T = TypeVar("T", bound=type[Baseline])


def register(cls: T) -> T:
    """Class decorator: add a system under its ``name``; a second class with that name is an error."""
    _BASELINES.register(cls)
    return cls


def unregister(name: str) -> None:
    _BASELINES.unregister(name)


def baseline_class(name: str) -> type[Baseline]:
    return _BASELINES.get(name)


def get_baseline(name: str, options: Mapping[str, Any] | None = None) -> Baseline:
    """An instance of the named system with ``options`` checked and overlaid on its defaults."""
    return baseline_class(name)(options)


def baseline_names() -> list[str]:
    return _BASELINES.names()


def all_baselines() -> list[type[Baseline]]:
    return _BASELINES.all()


def baselines_for(scorer: str) -> list[type[Baseline]]:
    """The systems that write submissions for ``scorer``, by name."""
    return [cls for cls in all_baselines() if scorer in cls.scorers]
