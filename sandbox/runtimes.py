"""Runtimes: the Python environments programs run with, chosen by the image a bundle names.

CodaLab and Codabench run a scoring program in a Docker image (``codalab/codalab-legacy:py37``...).
Podium runs it in a Python virtual environment instead: the operator maps image names to environment
folders (``{"codalab/codalab-legacy:py37": "/srv/runtimes/py37", "*": "/srv/runtimes/default"}``);
``"*"`` is the default, and without one the server's own environment is the default.

Inside the sandbox a runtime is seen at ``/runtime`` whatever its folder on the host (``Runtime.view``):
a virtual environment as a new one made there (its ``lib/``, a ``pyvenv.cfg`` naming the installation it
was made from, seen at ``/runtime/base`` unless it is part of the system's ``/usr``, and ``bin/python``,
``python3``, ``python3.X``), an installation prefix as itself. ``/runtime/bin`` comes first on the
program's PATH, so ``python`` and ``python3`` are its own. Nothing of the host's paths is shown. The
sandbox's user must be able to read the runtime: ``check_readable`` says which folder it cannot.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: The key of the default runtime in the table.
DEFAULT_KEY = "*"
#: Folders that every sandbox sees anyway; a runtime inside them needs no folder of its own.
SYSTEM_FOLDERS = (Path("/usr"),)
#: Where the sandbox shows a runtime, and the installation a virtual environment was made from.
RUNTIME = "/runtime"
RUNTIME_BASE = "/runtime/base"


class RuntimeProblem(ValueError):
    """A runtime table or folder that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Runtime:
    """A Python environment: ``root`` (a venv or a prefix with ``bin/python3``), ``base`` (the installation a
    venv was made from, when outside the system's ``/usr``) and ``interpreter`` (the real executable)."""

    root: Path
    base: Path | None
    interpreter: Path
    venv: bool

    @property
    def bin(self) -> Path:
        """The host folder of its executables (for running it outside the sandbox)."""
        return self.root / "bin"

    @property
    def folders(self) -> tuple[Path, ...]:
        """The host folders the sandbox shows, at neutral paths."""
        return tuple(f for f in (self.root, self.base) if f is not None and _outside_system(f))

    def _inside(self, path: Path) -> str:
        """Where a host path of the installation is seen inside the sandbox."""
        if self.base is not None and path.is_relative_to(self.base):
            return f"{RUNTIME_BASE}/{path.relative_to(self.base)}".rstrip("/")
        if not self.venv and _outside_system(self.root):
            return f"{RUNTIME}/{path.relative_to(self.root)}".rstrip("/")
        return str(path)

    def view(self) -> RuntimeView:
        """How the sandbox shows this runtime: mounts, files made for it, its PATH entry and environment."""
        mounts: list[tuple[str, str, str]] = []
        files: dict[str, bytes] = {}
        env: dict[str, str] = {}
        if self.base is not None:
            mounts.append(("--ro-bind", str(self.base), RUNTIME_BASE))
            if any((self.base / "lib").glob("libpython*.so*")):  # a shared build finds its library by host path
                env["LD_LIBRARY_PATH"] = f"{RUNTIME_BASE}/lib"
        if not self.venv:
            if not _outside_system(self.root):
                return RuntimeView(mounts, files, str(self.bin), env)
            if any((self.root / "lib").glob("libpython*.so*")):
                env["LD_LIBRARY_PATH"] = f"{RUNTIME}/lib"
            return RuntimeView([("--ro-bind", str(self.root), RUNTIME)], files, f"{RUNTIME}/bin", env)
        interpreter = self._inside(self.interpreter)
        files[f"{RUNTIME}/pyvenv.cfg"] = (
            f"home = {interpreter.rsplit('/', 1)[0]}\ninclude-system-site-packages = false\n"
        ).encode()
        mounts.append(("--ro-bind", str(self.root / "lib"), f"{RUNTIME}/lib"))
        mounts.append(("--symlink", "lib", f"{RUNTIME}/lib64"))
        for name in sorted({"python", "python3", self.interpreter.name}):
            mounts.append(("--symlink", interpreter, f"{RUNTIME}/bin/{name}"))
        return RuntimeView(mounts, files, f"{RUNTIME}/bin", env)


@dataclass(frozen=True)
class RuntimeView:
    """A runtime as the sandbox shows it: bwrap mounts (option, source, target), files by target, PATH entry."""

    mounts: list[tuple[str, str, str]]
    files: dict[str, bytes]
    bin: str
    env: dict[str, str]


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
    venv = (root / "pyvenv.cfg").is_file()
    real = interpreter.resolve()
    base = _base_prefix(root) if venv else None
    if base is None and venv:
        base = real.parent.parent
    if base is not None and not real.is_relative_to(base):
        base = real.parent.parent  # pyvenv.cfg names a folder of links: the interpreter's own installation
    return Runtime(root, base if base is not None and _outside_system(base) else None, real, venv)


_readable: set[Path] = set()
#: How many levels below a runtime's folder ``check_readable`` looks.
CHECK_DEPTH = 4


def check_readable(runtime: Runtime, *, others: bool = True) -> None:
    """Raise ``RuntimeProblem`` naming a folder or file of the runtime that other users cannot read.

    With ``others`` False (an unprivileged runner, whose own user the program runs as), only whether this
    process can enter the runtime's folders is looked at.

    When the runner is root the program runs as a user of its own, for whom only the "others" permission
    bits count. What is looked at is every entry down to ``CHECK_DEPTH`` levels (``lib/python3.X/site-packages``
    and each package in it; a package installed with a private umask has its folder so): every file would
    cost a second at a worker's first run. A runtime found readable is not looked at again by this process.
    """
    for folder in runtime.folders:
        if not others and not os.access(folder, os.R_OK | os.X_OK):
            raise RuntimeProblem(
                f"the sandbox cannot read the runtime {folder}: the server's user must be able to read and enter "
                "every folder of a runtime"
            )
        if folder in _readable or not others:
            continue
        for top, dirs, files in os.walk(folder):
            depth = len(Path(top).relative_to(folder).parts)
            for path in [top] + [os.path.join(top, name) for name in dirs + files]:
                try:
                    mode = os.lstat(path).st_mode
                except OSError:
                    continue
                needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
                if not stat.S_ISLNK(mode) and mode & needed != needed:
                    raise RuntimeProblem(
                        f"the sandbox's user cannot read {path} (mode {stat.S_IMODE(mode):04o}) "
                        f"of the runtime {folder}: "
                        "programs run as a user of their own, so every folder of a runtime must be readable and "
                        f"searchable, and every file readable, by all users (chmod -R o+rX {folder})"
                    )
            if depth >= CHECK_DEPTH - 1:
                dirs[:] = []
        _readable.add(folder)


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
