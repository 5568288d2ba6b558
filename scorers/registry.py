"""The registry of scorers, keyed by name, and the ``Registry`` class that baseline systems use too.

Scorer modules register their classes with ``@register`` when they are imported. The built-in scorers are
registered lazily: ``BUILT_IN`` names the module of each, and a scorer's module is imported the first time its
class is asked for, so ``podium score`` imports only the scorer it runs (importing every scorer module took a
third of its start-up). Listing the registry (``scorer_names``) needs no import; ``all_scorers`` imports them all.
``tests/scorers/test_registry.py`` checks that ``BUILT_IN`` names every scorer module of the package. Plugins and
tests may register extra scorers (a deliberately slow one, say) and remove them with ``unregister``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from scorers.base import Scorer
from scorers.errors import UnknownScorer


class Named(Protocol):
    name: ClassVar[str]


C = TypeVar("C", bound=type[Named])


class Registry(Generic[C]):
    """Classes keyed by their ``name``: the scorers here, the baseline systems in ``baselines.registry``."""

    def __init__(self, kind: str, unknown: type[Exception], modules: Mapping[str, str] | None = None) -> None:
        self.kind = kind
        self.unknown = unknown
        self._classes: dict[str, C] = {}
        #: Names registered lazily: the module whose import registers each (a class not imported yet).
        self._modules: dict[str, str] = dict(modules or {})

    def register(self, cls: C) -> C:
        """Add ``cls`` under its ``name``; a second class with that name is an error."""
        module = self._modules.get(cls.name)
        if module is not None and module != cls.__module__ and cls.name not in self._classes:
            self._load(cls.name)  # the lazily registered class of that name, so that the clash is seen now
        existing = self._classes.get(cls.name)
        if existing is not None and existing is not cls:
            raise ValueError(f"a {self.kind} named {cls.name!r} is already registered ({existing.__qualname__})")
        self._classes[cls.name] = cls
        return cls

    def unregister(self, name: str) -> None:
        self._classes.pop(name, None)
        self._modules.pop(name, None)

    def _load(self, name: str) -> C | None:
        """The class of ``name``, importing the module that registers it if it is not imported yet."""
        cls = self._classes.get(name)
        if cls is None and name in self._modules:
            importlib.import_module(self._modules[name])
            cls = self._classes.get(name)
            if cls is None:
                raise RuntimeError(f"{self._modules[name]} registers no {self.kind} named {name!r}")
        return cls

    def get(self, name: str) -> C:
        """The class registered as ``name``; ``unknown`` (the error class) names the registered ones."""
        cls = self._load(name)
        if cls is None:
            known = ", ".join(self.names())
            raise self.unknown(f"unknown {self.kind} {name!r}; known {self.kind}s: {known}")
        return cls

    def names(self) -> list[str]:
        return sorted(self._classes.keys() | self._modules.keys())

    def all(self) -> list[C]:
        out = []
        for name in self.names():
            cls = self._load(name)
            assert cls is not None  # every name is registered or has its module
            out.append(cls)
        return out


#: The built-in scorers and the module that registers each, imported on first use.
BUILT_IN: dict[str, str] = {
    "classification": "scorers.generic.classification",
    "famus-cdae": "scorers.tasks.famus",
    "famus-sv": "scorers.tasks.famus_sv",
    "program": "scorers.generic.program",
    "regression": "scorers.generic.regression",
    "scier-ere": "scorers.tasks.scier",
    "scier-re": "scorers.tasks.scier",
    "svident-detection": "scorers.tasks.svident",
    "svident-disambiguation": "scorers.tasks.svident",
    "trec": "scorers.generic.trec",
}

_SCORERS: Registry[type[Scorer[Any, Any, Any]]] = Registry("scorer", UnknownScorer, BUILT_IN)

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
