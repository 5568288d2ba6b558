"""The registry of scorers, keyed by name.

Scorer modules register their classes with ``@register``; ``scorers/tasks/__init__.py`` imports
the seed tasks so that importing ``scorers`` fills the registry. Tests may register extra
scorers (a deliberately slow one, say) and remove them with ``unregister``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from scorers.base import Scorer
from scorers.errors import UnknownScorer

_REGISTRY: dict[str, type[Scorer[Any, Any, Any]]] = {}

T = TypeVar("T", bound=type[Scorer[Any, Any, Any]])


def register(cls: T) -> T:
    """Class decorator: add a scorer under its ``name``; a second class with that name is an error."""
    existing = _REGISTRY.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(f"a scorer named {cls.name!r} is already registered ({existing.__qualname__})")
    _REGISTRY[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def scorer_class(name: str) -> type[Scorer[Any, Any, Any]]:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownScorer(f"unknown scorer {name!r}; known scorers: {known}") from None


def get_scorer(name: str, options: Mapping[str, Any] | None = None) -> Scorer[Any, Any, Any]:
    """An instance of the named scorer with ``options`` checked and overlaid on its defaults."""
    return scorer_class(name)(options)


def scorer_names() -> list[str]:
    return sorted(_REGISTRY)


def all_scorers() -> list[type[Scorer[Any, Any, Any]]]:
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]
