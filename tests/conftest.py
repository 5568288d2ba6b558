"""Shared test helpers: where ../shared lives, and a skip with a clear reason when it is absent; how
the tests are spread over parallel workers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    """The shared inputs folder: ``PODIUM_SHARED_DIR`` or ``../shared`` beside the checkout."""
    return Path(os.environ.get("PODIUM_SHARED_DIR") or ROOT.parent / "shared").resolve()


def require_shared(*parts: str) -> Path:
    """The path under the shared folder, or skip the test saying which folder is missing."""
    path = shared_dir().joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared inputs not found at {path} (set PODIUM_SHARED_DIR to the shared folder)")
    return path


@pytest.fixture
def shared() -> Path:
    return require_shared()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``pytest -n N --dist loadgroup`` (``make test``), keep together the tests that share a
    fixture wider than one test (a module's server, browser or schema): each such module runs on one
    worker, which builds the fixture once. Every other test goes wherever a worker is free; what the
    tests use on this machine (databases, broker queues, ports, folders) is unique per test or per
    worker already."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        definitions = info.name2fixturedefs.values() if info is not None else ()
        if any(d.scope in ("module", "class", "package") for defs in definitions for d in defs):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
