"""Plugins: Python modules named in ``PODIUM_PLUGINS``, imported when ``podium serve`` and
``podium worker`` start, so that they can register extra scorers or baseline systems (a module
calls ``scorers.register(MyScorer)`` or ``baselines.register(MySystem)`` when it is imported).

Every process that handles a phase must load the same plugins: the web tier validates uploads with
the scorer and the workers score with it.
"""

from __future__ import annotations

import importlib


class PluginError(Exception):
    """A plugin module could not be imported; the message names it and says why."""


def load_plugins(modules: tuple[str, ...]) -> list[str]:
    """Import each module in order; returns their names."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # a plugin's own error must name the plugin, not crash the server
            raise PluginError(f"PODIUM_PLUGINS: cannot import {name!r}: {type(exc).__name__}: {exc}") from exc
    return list(modules)
