"""The import rules inside ``app`` (the import-linter contracts of pyproject.toml say the same, for
``make lint``): services know nothing of HTTP or Celery, the web and the workers do not import each
other, storage depends on nothing above it, and no module imports itself back through others."""

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
        ("app.services", ("fastapi", "starlette", "app.web", "app.worker", "app.cli", "app.main", "celery")),
        ("app.storage", ("fastapi", "starlette", "app.web", "app.worker", "app.services", "celery")),
        ("app.web", ("app.worker", "app.cli", "celery")),
        ("app.worker", ("app.web", "app.cli", "fastapi", "starlette")),
    ],
)
def test_a_layer_does_not_import_what_it_must_not(package: str, forbidden: tuple[str, ...]) -> None:
    bad = sorted(m for m in imports(package) if any(m == f or m.startswith(f + ".") for f in forbidden))
    assert bad == []


def import_circles(modules: set[str], imported_by: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other round a circle (Tarjan's strongly connected
    components, written out here because grimp has no such query)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in imported_by[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return circles


def test_no_module_of_the_application_imports_itself_back() -> None:
    modules = {m for m in graph().modules if m == "app" or m.startswith("app.")}
    imported_by = {m: graph().find_modules_directly_imported_by(m) & modules for m in modules}
    assert import_circles(modules, imported_by) == []


def test_the_circle_finder_finds_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_circles(set(edges), edges) == [["a", "b", "c"]]
