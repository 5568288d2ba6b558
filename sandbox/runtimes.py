"""Runtimes: the Python environments programs run with, chosen by the image a bundle names.

CodaLab and Codabench run a scoring program in a Docker image (``codalab/codalab-legacy:py37``...).
Podium runs it in a Python virtual environment instead: the operator maps image names to environment
folders (``{"codalab/codalab-legacy:py37": "/srv/runtimes/py37", "*": "/srv/runtimes/default"}``);
``"*"`` is the default, and without one the server's own environment is the default. The
environment's ``bin/`` comes first on the program's PATH, so ``python`` and ``python3`` are its own.
Inside the sandbox the environment folder, and the Python installation it was made from, are visible
read-only at their own paths (a virtual environment names both by absolute path).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: The key of the default runtime in the table.
DEFAULT_KEY = "*"
#: Folders that every sandbox sees anyway; a runtime inside them needs no folder of its own.
SYSTEM_FOLDERS = (Path("/usr"),)


class RuntimeProblem(ValueError):
    """A runtime table or folder that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Runtime:
    """A Python environment: ``root`` (its ``bin/`` goes first on PATH) and the folders it needs to be seen."""

    root: Path
    folders: tuple[Path, ...]

    @property
    def bin(self) -> Path:
        return self.root / "bin"


def _base_prefix(root: Path) -> Path | None:
    """The installation a virtual environment was made from (``home`` in ``pyvenv.cfg`` is its bin folder)."""
    cfg = root / "pyvenv.cfg"
    try:
        lines = cfg.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip() == "home" and value.strip():
            return Path(value.strip()).resolve().parent
    return None


def _outside_system(path: Path) -> bool:
    return not any(path == folder or path.is_relative_to(folder) for folder in SYSTEM_FOLDERS)


def runtime_at(path: Path | str) -> Runtime:
    """The runtime whose folder is ``path``: a virtual environment or an installation prefix with ``bin/python3``."""
    given = Path(path)
    if not given.is_absolute():
        raise RuntimeProblem(f"the runtime folder {given} is not an absolute path")
    root = given.resolve()
    if not root.is_dir():
        raise RuntimeProblem(f"the runtime folder {given} does not exist on this worker")
    interpreter = next((root / "bin" / name for name in ("python3", "python") if (root / "bin" / name).exists()), None)
    if interpreter is None:
        raise RuntimeProblem(f"the runtime folder {given} has no bin/python3 (is it a Python environment?)")
    folders = [root]
    # The interpreter a venv links to, and the installation its pyvenv.cfg names, live elsewhere.
    for extra in (_base_prefix(root), interpreter.resolve().parent.parent):
        if extra is not None and extra.is_dir() and extra not in folders:
            folders.append(extra)
    return Runtime(root, tuple(folder for folder in folders if _outside_system(folder)))


def server_runtime() -> Runtime:
    """The environment this process runs in (the default when no ``"*"`` runtime is configured)."""
    return runtime_at(sys.prefix)


def parse_runtimes(text: str) -> dict[str, Path]:
    """The table from its JSON text (``PODIUM_PROGRAM_RUNTIMES``): image name -> absolute folder path."""
    if not text.strip():
        return {}
    try:
        table = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RuntimeProblem(f"the runtime table is not JSON ({exc})") from None
    if not isinstance(table, dict):
        raise RuntimeProblem('the runtime table must be a JSON object: {"image name": "/path/to/environment"}')
    out: dict[str, Path] = {}
    for image, folder in table.items():
        if not image.strip():
            raise RuntimeProblem("the runtime table has an empty image name")
        if not isinstance(folder, str) or not os.path.isabs(folder):
            raise RuntimeProblem(f"the runtime of {image!r} must be an absolute folder path, not {folder!r}")
        out[image] = Path(folder)
    return out


def choose_runtime(image: str | None, table: Mapping[str, Path]) -> tuple[Runtime, str | None]:
    """The runtime for ``image``, and a warning when the image has none of its own and the default stands in."""
    warning = image_warning(image, table)
    if image and image in table:
        return runtime_at(table[image]), None
    if DEFAULT_KEY in table:
        return runtime_at(table[DEFAULT_KEY]), warning
    return server_runtime(), warning


def image_warning(image: str | None, table: Mapping[str, Path]) -> str | None:
    """What ``choose_runtime`` would warn about ``image``, without looking at any folder."""
    if image and image not in table:
        default = "the default runtime" if DEFAULT_KEY in table else "the server's own Python environment"
        return (
            f"no runtime is configured for the image {image!r} (PODIUM_PROGRAM_RUNTIMES); programs run with {default}"
        )
    return None
