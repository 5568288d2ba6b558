"""Shared test helpers: where ../shared lives, and a skip with a clear reason when it is absent."""

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
