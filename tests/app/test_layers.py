"""The import rules inside ``app``: services know nothing of HTTP, the web and the workers do
not import each other, and storage depends on nothing above it. (The pure libraries' rule is an
import-linter contract in pyproject.toml.)"""

from __future__ import annotations

from functools import lru_cache

import grimp
import pytest


@lru_cache(maxsize=1)
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("app", include_external_packages=True)


def imports(package: str) -> set[str]:
    """Every module or external package that some module of ``package`` imports directly."""
    found: set[str] = set()
    for module in graph().find_descendants(package) | {package}:
        found |= graph().find_modules_directly_imported_by(module)
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("app.services", ("fastapi", "starlette", "app.web", "app.worker", "celery")),
        ("app.storage", ("fastapi", "starlette", "app.web", "app.worker", "app.services")),
        ("app.web", ("app.worker",)),
        ("app.worker", ("app.web", "fastapi", "starlette")),
    ],
)
def test_a_layer_does_not_import_what_it_must_not(package: str, forbidden: tuple[str, ...]) -> None:
    bad = sorted(m for m in imports(package) if any(m == f or m.startswith(f + ".") for f in forbidden))
    assert bad == []
