"""The registry of baseline systems, keyed by name.

System modules register their classes with ``@register``; ``baselines/systems/__init__.py``
imports every module in that package, so importing ``baselines`` fills the registry. Tests may
register extra systems and remove them with ``unregister``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from baselines.base import Baseline
from baselines.errors import UnknownBaseline

_REGISTRY: dict[str, type[Baseline]] = {}

T = TypeVar("T", bound=type[Baseline])


def register(cls: T) -> T:
    """Class decorator: add a system under its ``name``; a second class with that name is an error."""
    existing = _REGISTRY.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(f"a baseline named {cls.name!r} is already registered ({existing.__qualname__})")
    _REGISTRY[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def baseline_class(name: str) -> type[Baseline]:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownBaseline(f"unknown baseline {name!r}; known baselines: {known}") from None


def get_baseline(name: str, options: Mapping[str, Any] | None = None) -> Baseline:
    """An instance of the named system with ``options`` checked and overlaid on its defaults."""
    return baseline_class(name)(options)


def baseline_names() -> list[str]:
    return sorted(_REGISTRY)


def all_baselines() -> list[type[Baseline]]:
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


def baselines_for(scorer: str) -> list[type[Baseline]]:
    """The systems that write submissions for ``scorer``, by name."""
    return [cls for cls in all_baselines() if scorer in cls.scorers]
