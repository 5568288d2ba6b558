"""One run of a participant's program in the sandbox, and what it wrote; no database.

The program sees exactly these paths (the gold is never among them):

| path | what | access |
|---|---|---|
| ``/app/program`` | the unpacked zip (its one top-level folder, if it was zipped so); the working folder | read-only |
| ``/input`` | the phase's inputs (``code.inputs``) | read-only |
| ``/output`` | empty; where the program writes its predictions | read-write |

The command is the ``command`` of a ``metadata`` file in the zip (as Codabench reads it), else the phase's,
run with ``/bin/sh -c``, the runtime's ``bin/`` first on PATH, a clean environment and the phase's limits for
all the run's processes together. ``CodeOutcome.failure`` says in plain words why a run gave no predictions
when that is the program's doing (its zip, its exit, its limits, its output); ``ArchiveProblem`` (the stored
inputs), ``RuntimeProblem`` and ``SandboxUnavailable`` are the platform's.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from app.services.code import ingestion
from app.services.code.settings import CodeSettings
from codalab.archives import ArchiveProblem, Zip, pack_folder, unpack
from codalab.program import PROGRAM_ENV, ProgramProblem, find_metadata, read_command
from sandbox import Bind, Limits, RunResult, Runtime, run
from sandbox.cleanup import run_folder
from sandbox.limits import MIB

#: How much a program's zip and the inputs may unpack to, and how many entries they may hold.
UNPACK = {"max_bytes": 4 * 1024**3, "max_entries": 100_000}


@dataclass(frozen=True)
class CodeOutcome:
    """How the program ran (``run``: None when it could not start) and its predictions, or why there are none."""

    run: RunResult | None
    predictions: bytes | None = None
    failure: str | None = None
    #: The GPU it ran on ("GPU 0"; None: the CPU).
    device: str | None = None
    #: It did not run: this worker cannot run it, and it waits for one that can (why; ``code.placement``).
    released: str | None = None


@dataclass(frozen=True)
class Isolation:
    """Where and how programs run on this worker (from the settings)."""

    runtime: Runtime | None
    isolation: str = "bwrap"
    require_cgroup: bool = True
    scratch: Path | None = None
    #: A GPU's device nodes and environment (``sandbox.gpus.Gpu``), for a run that holds one.
    devices: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


def _root(program: Path) -> Path:
    """The folder the program runs in: the zip's root, or its one top-level folder when it holds everything."""
    if find_metadata(program) is not None:
        return program
    inner = [p for p in program.iterdir() if not p.name.startswith(".") and p.name != "__MACOSX"]
    return inner[0] if len(inner) == 1 and inner[0].is_dir() and not inner[0].is_symlink() else program


def _command(root: Path, code: CodeSettings) -> str:
    if find_metadata(root) is None:
        return code.command
    return read_command(root)  # raises ProgramProblem for a metadata file without a usable command


def _only_plain(output: Path) -> str | None:
    """Why the output folder cannot be taken (a link, a device, a pipe), or None."""
    for folder, dirs, files in os.walk(output):
        for name in dirs + files:
            mode = os.lstat(os.path.join(folder, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                return f"/output holds {name!r}, which is not a plain file or folder"
    return None


def _predictions(output: Path, code: CodeSettings, limit: int) -> CodeOutcome | bytes:
    problem = _only_plain(output)
    if problem:
        return CodeOutcome(None, failure=f"Your program's output was not used: {problem}.")
    if code.output is None:
        if not any(output.iterdir()):
            return CodeOutcome(None, failure="Your program wrote nothing in /output.")
        try:
            return pack_folder(output, max_bytes=limit)
        except ArchiveProblem as exc:
            return CodeOutcome(None, failure=f"Your program's output was not used: {exc}.")
    path = output / code.output
    if not path.is_file() or path.is_symlink():
        return CodeOutcome(None, failure=f"Your program wrote no {code.output} in /output.")
    return path.read_bytes()


def run_code(program: Zip, inputs: Zip, code: CodeSettings, where: Isolation) -> CodeOutcome:
    """Unpack the program and the inputs (zips: bytes, or local files read entry by entry), run the program on
    them, and read its predictions."""
    limits = Limits(
        wall_seconds=code.time_limit_s,
        memory_bytes=code.memory_mb * MIB,
        require_cgroup=where.require_cgroup,
        address_space=not where.devices,
    )
    with run_folder("podium-code-", where.scratch) as space:
        for folder in ("input", "output", "logs"):
            (space / folder).mkdir()
        unpack(inputs, space / "input", what="phase's inputs", **UNPACK)
        try:
            unpack(program, space / "program", what="program", **UNPACK)
            root = _root(space / "program")
            # With an ingestion program, the team's zip is code that the ingestion program imports.
            command = "" if code.ingestion else _command(root, code)
        except (ArchiveProblem, ProgramProblem) as exc:
            return CodeOutcome(None, failure=f"Your program could not be run: {exc}.")
        binds = [
            Bind(root, "/app/program"),
            Bind(space / "input", "/input"),
            Bind(space / "output", "/output", writable=True),
        ]
        if code.ingestion:
            command, binds = ingestion.prepare(space, root)
        result = run(
            ["/bin/sh", "-c", command],
            binds,
            cwd="/app/program",
            logs=space / "logs",
            limits=limits,
            runtime=where.runtime,
            env={**PROGRAM_ENV, **dict(where.env)},
            isolation=where.isolation,
            devices=where.devices,
        )
        if not result.ok:
            who = "The ingestion program failed on your code" if code.ingestion else "Your program failed"
            return CodeOutcome(result, failure=f"{who}: {result.describe()}.")
        if code.ingestion and (problem := ingestion.finish(space / "output", result)):
            return CodeOutcome(result, failure=problem)
        taken = _predictions(space / "output", code, limits.output_bytes)
        if isinstance(taken, CodeOutcome):
            return CodeOutcome(result, failure=taken.failure)
        return CodeOutcome(result, predictions=taken)
