"""The registry of scorers, keyed by name, and the ``Registry`` class that baseline systems use too.

Scorer modules register their classes with ``@register``; ``scorers/tasks/__init__.py`` imports
the seed tasks so that importing ``scorers`` fills the registry. Tests may register extra
scorers (a deliberately slow one, say) and remove them with ``unregister``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from scorers.base import Scorer
from scorers.errors import UnknownScorer


class Named(Protocol):
    name: ClassVar[str]


C = TypeVar("C", bound=type[Named])


class Registry(Generic[C]):
    """Classes keyed by their ``name``: the scorers here, the baseline systems in ``baselines.registry``."""

    def __init__(self, kind: str, unknown: type[Exception]) -> None:
        self.kind = kind
        self.unknown = unknown
        self._classes: dict[str, C] = {}

    def register(self, cls: C) -> C:
        """Add ``cls`` under its ``name``; a second class with that name is an error."""
        existing = self._classes.get(cls.name)
        if existing is not None and existing is not cls:
            raise ValueError(f"a {self.kind} named {cls.name!r} is already registered ({existing.__qualname__})")
        self._classes[cls.name] = cls
        return cls

    def unregister(self, name: str) -> None:
        self._classes.pop(name, None)

    def get(self, name: str) -> C:
        """The class registered as ``name``; ``unknown`` (the error class) names the registered ones."""
        try:
            return self._classes[name]
        except KeyError:
            known = ", ".join(sorted(self._classes))
            raise self.unknown(f"unknown {self.kind} {name!r}; known {self.kind}s: {known}") from None

    def names(self) -> list[str]:
        return sorted(self._classes)

    def all(self) -> list[C]:
        return [self._classes[name] for name in sorted(self._classes)]


_SCORERS: Registry[type[Scorer[Any, Any, Any]]] = Registry("scorer", UnknownScorer)

T = TypeVar("T", bound=type[Scorer[Any, Any, Any]])


def register(cls: T) -> T:
    """Class decorator: add a scorer under its ``name``; a second class with that name is an error."""
    _SCORERS.register(cls)
    return cls


def unregister(name: str) -> None:
    _SCORERS.unregister(name)


def scorer_class(name: str) -> type[Scorer[Any, Any, Any]]:
    return _SCORERS.get(name)


def get_scorer(name: str, options: Mapping[str, Any] | None = None) -> Scorer[Any, Any, Any]:
    """An instance of the named scorer with ``options`` checked and overlaid on its defaults."""
    return scorer_class(name)(options)


def scorer_names() -> list[str]:
    return _SCORERS.names()


def all_scorers() -> list[type[Scorer[Any, Any, Any]]]:
    return _SCORERS.all()
