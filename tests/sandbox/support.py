"""Running a Python script in the sandbox the way a scoring program runs, for the sandbox tests."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyseccomp

from sandbox import Bind, Limits, RunResult, run, server_runtime
from tests.conftest import ROOT

#: Small limits, so that every attack ends quickly.
TEST_LIMITS = Limits(
    wall_seconds=20,
    memory_bytes=1024 * 1024 * 1024,
    processes=64,
    output_bytes=32 * 1024 * 1024,
    tmp_bytes=16 * 1024 * 1024,
    shm_bytes=4 * 1024 * 1024,
)


@dataclass
class Run:
    result: RunResult
    output: Path
    program: Path

    def report(self) -> Any:
        """What the script wrote to /app/output/report.json."""
        return json.loads((self.output / "report.json").read_text())


def run_script(
    tmp: Path,
    source: str,
    *,
    args: Sequence[str] = (),
    limits: Limits = TEST_LIMITS,
    binds: Sequence[Bind] = (),
    env: dict[str, str] | None = None,
) -> Run:
    """Run ``source`` as /app/program/script.py with /app/output writable; the logs stay outside."""
    tmp.mkdir(parents=True, exist_ok=True)
    program, output, logs = tmp / "program", tmp / "output", tmp / "logs"
    for folder in (program, output, logs):
        folder.mkdir(exist_ok=True)
    (program / "script.py").write_text(textwrap.dedent(source))
    result = run(
        ["python3", "/app/program/script.py", *args],
        [Bind(program, "/app/program"), Bind(output, "/app/output", writable=True), *binds],
        cwd="/app/program",
        logs=logs,
        limits=limits,
        runtime=server_runtime(),
        env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", **(env or {})},
    )
    return Run(result, output, program)


def sandbox_processes(uid: int) -> list[int]:
    """Processes of the run whose user is ``uid`` still alive (a root runner gives each run a user of its own;
    unprivileged, the run's processes are the server's user's and none is told apart: the empty list)."""
    if uid < 2_000_000:
        return []
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    out.append(int(entry))
            except OSError:
                continue
    return out


@contextlib.contextmanager
def readable_sandbox() -> Iterator[Path]:
    """A folder holding the sandbox package and its one dependency, where an unprivileged user can read them (for
    ``PYTHONPATH``): the checkout, and pytest's own temporary folders (0700), may be in folders it cannot enter."""
    libraries = Path(tempfile.mkdtemp(prefix="podium-unprivileged-", dir="/tmp"))
    try:
        libraries.chmod(0o755)
        shutil.copytree(ROOT / "sandbox", libraries / "sandbox", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(pyseccomp.__file__, libraries)
        yield libraries
    finally:
        shutil.rmtree(libraries)
