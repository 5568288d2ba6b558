"""Routers added to an app with their routes prepared once per process.

FastAPI prepares an included router's routes (their parameters, bodies and answers as pydantic fields) for
each ``include_router``, lazily, at an app's first requests: about 150 ms of CPU for Podium's routes. A process
makes one app (``podium serve``), but the test suite makes hundreds, one per test. ``include`` prepares each
router once, included in a holder router of its own, and gives every app the holder's routes: the same
routes, in the same order, as ``app.include_router(router, dependencies=...)``. Podium sets no
``app.dependency_overrides``, the only thing an inclusion into the app itself would add.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, FastAPI

#: Per router and the callables of its dependencies (kept with them, so that their ids stay theirs): the routes.
_prepared: dict[tuple[int, ...], tuple[tuple[Any, ...], list[Any]]] = {}


def include(app: FastAPI, router: APIRouter, *, dependencies: Sequence[Any] = ()) -> None:
    """``app.include_router(router, dependencies=dependencies)``, its routes prepared once per process for each
    router and set of dependencies."""
    owners = (router, *(getattr(dependency, "dependency", dependency) for dependency in dependencies))
    key = tuple(map(id, owners))
    if key not in _prepared:
        holder = APIRouter()
        holder.include_router(router, dependencies=list(dependencies))
        _prepared[key] = (owners, list(holder.routes))
    app.router.routes.extend(_prepared[key][1])
