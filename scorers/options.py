"""Options of the pure libraries' plug-ins (scorers, baseline systems): declared, defaulted and checked alike.

A plug-in class declares its options as ``OptionSpec`` (name, default, meaning); an instance is built from
the options a task or a run gives, overlaid on the defaults. ``resolve`` refuses unknown names and values of
another type than the default's, naming the option and the plug-in; a plug-in checks richer rules on top.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OptionSpec:
    """An option, its default and what it changes."""

    name: str
    default: Any
    meaning: str


def resolve(
    specs: Sequence[OptionSpec],
    given: Mapping[str, Any],
    *,
    owner: str,
    error: type[Exception],
    check: Callable[[str, Any], Any],
) -> dict[str, Any]:
    """Defaults overlaid with ``given``, each given value passed through ``check(name, value)``; unknown names
    and a ``given`` that is not a mapping raise ``error`` naming ``owner`` (``famus-cdae``, ``baseline x``)."""
    if not isinstance(given, Mapping):
        raise error(f"options for {owner} must be a mapping, not {type(given).__name__}")
    known = {spec.name: spec for spec in specs}
    unknown = sorted(set(given) - set(known))
    if unknown:
        names = ", ".join(known) or "none"
        raise error(f"unknown option(s) for {owner}: {', '.join(unknown)} (known: {names})")
    resolved = {name: spec.default for name, spec in known.items()}
    for name, value in given.items():
        resolved[name] = check(name, value)
    return resolved


def check_type(spec: OptionSpec, value: Any, *, owner: str, error: type[Exception]) -> Any:
    """``value`` if it has the type of the option's default (a float option takes an int, as a float; a list
    option a tuple, as a list; booleans are never numbers); a default of None takes anything."""
    default = spec.default
    if default is None:
        return value
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, (list, tuple))
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise error(
            f"option {spec.name!r} of {owner} must be of type {type(default).__name__}, not {type(value).__name__}"
        )
    if isinstance(default, float):
        return float(value)
    return list(value) if isinstance(value, tuple) else value
