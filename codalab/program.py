"""Running a CodaLab or Codabench scoring program the way those platforms do, inside the sandbox.

The program folder holds ``metadata`` or ``metadata.yaml`` whose ``command`` is run with ``/bin/sh -c``
after the CodaLab v1.5 placeholders are substituted (Codabench v2 commands name the paths directly).
The program sees exactly these paths:

| path | what | access |
|---|---|---|
| ``/app/program`` | the scoring program (the working folder) | read-only |
| ``/app/input/ref`` | the phase's reference data | read-only |
| ``/app/input/res`` | the unzipped submission | read-only |
| ``/app/output`` | where it writes ``scores.json`` or ``scores.txt`` and ``detailed_results.html`` | read-write |
| ``/app/shared`` | an empty folder (``$shared``) | read-only |

``scores.json`` (a JSON object) is read first, else ``scores.txt`` (YAML ``label: value`` lines); the
numbers in it are the scores. A ``detailed_results.html`` is kept, sanitized with nh3.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nh3
import yaml

from codalab.archives import ArchiveProblem, unpack
from codalab.bounded_yaml import load_bounded
from sandbox import Bind, Limits, RunResult, Runtime, run
from sandbox.cleanup import run_folder

APP = "/app"
#: The v1.5 placeholders and what they stand for inside the sandbox.
PLACEHOLDERS = {
    "program": "/app/program",
    "input": "/app/input",
    "output": "/app/output",
    "shared": "/app/shared",
    "hidden": "/app/input/ref",
    "predictions": "/app/input/res",
    "ingestion_program": "/app/ingestion_program",
    "submission_program": "/app/ingested_program",
    "tmp": "/tmp",
}
_PLACEHOLDER = re.compile(r"\$\{?(" + "|".join(sorted(PLACEHOLDERS, key=len, reverse=True)) + r")\}?(?![A-Za-z0-9_])")
METADATA_FILES = ("metadata.yaml", "metadata.yml", "metadata")
SCORES_JSON, SCORES_TXT, DETAILED = "scores.json", "scores.txt", "detailed_results.html"
#: The largest scores file and detailed results page read back.
MAX_SCORES_BYTES = 1024 * 1024
MAX_DETAILED_BYTES = 2 * 1024 * 1024
#: What the program's environment holds (PATH is the runtime's ``bin/`` first).
PROGRAM_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": "/tmp",
    # Threads count as processes: numeric libraries start one per core unless told otherwise.
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}


#: What a team is told when the program gave no scores. It is the same whatever went wrong: how a program
#: fails may depend on the reference data, so only the organizers see the reason (and, where a phase
#: allows it, the team sees the end of the program's stderr as well).
TEAM_FAILURE = "The scoring program did not produce scores for this submission."


class ProgramProblem(ValueError):
    """A scoring program that cannot be run as given (no metadata, no command); meant for organizers."""


@dataclass(frozen=True)
class ProgramOutcome:
    """What one run of a scoring program gave.

    ``failure`` is the plain sentence for the team (``TEAM_FAILURE``, or why the submission could not be
    unpacked); ``detail`` says, for organizers, how the program ended or what was wrong with what it
    wrote. ``run`` holds the exit status and the ends of its logs.
    """

    scores: dict[str, float]
    run: RunResult | None
    detailed_html: str | None = None
    failure: str | None = None
    detail: str | None = None
    #: Keys of the scores file whose values are not numbers Podium can store, with why.
    ignored: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.failure is None


def find_metadata(program: Path) -> Path | None:
    for name in METADATA_FILES:
        candidate = program / name
        if candidate.is_file():
            return candidate
    return None


def program_root(program: Path) -> Path:
    """The folder holding the metadata: ``program`` itself, or its one top-level folder when it was zipped so."""
    if find_metadata(program) is not None:
        return program
    inner = [p for p in program.iterdir() if not p.name.startswith(".")] if program.is_dir() else []
    if len(inner) == 1 and inner[0].is_dir() and find_metadata(inner[0]) is not None:
        return inner[0]
    return program


def read_command(program: Path) -> str:
    """The ``command`` of the program's metadata; raises ``ProgramProblem`` saying what is missing."""
    file = find_metadata(program)
    if file is None:
        raise ProgramProblem("the scoring program has no metadata file (metadata or metadata.yaml with a command)")
    try:
        document = load_bounded(file.read_text(encoding="utf-8-sig"))
    except (yaml.YAMLError, UnicodeDecodeError, OSError) as exc:
        raise ProgramProblem(f"the scoring program's {file.name} is not readable YAML ({exc})") from None
    command = document.get("command") if isinstance(document, dict) else None
    if not isinstance(command, str) or not command.strip():
        raise ProgramProblem(f"the scoring program's {file.name} has no command")
    return command.strip()


def substitute(command: str) -> str:
    """The command with ``$program``, ``$input``, ``$output``... replaced by the paths they stand for."""
    return _PLACEHOLDER.sub(lambda m: PLACEHOLDERS[m.group(1)], command)


def _read_output(output: Path, name: str, limit: int) -> bytes | None:
    """A regular file the program wrote, read without following links and up to ``limit + 1`` bytes."""
    try:
        fd = os.open(output / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return file.read(limit + 1)


def storable(value: Any) -> float | str:
    """``value`` as a number Podium stores (a finite float), or why it is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "not a number"
    try:
        number = float(value)
    except OverflowError:
        return "a number too large to store"
    return number if math.isfinite(number) else f"{number}, not a finite number"


def parse_scores(output: Path) -> tuple[dict[str, float], dict[str, str]]:
    """The scores the program wrote, and the keys it wrote that are not numbers Podium can store (with why).

    Raises ``ProgramProblem`` (for organizers) when there is no scores file or it cannot be read, also when it
    is nested too deeply to read: whatever the file holds is the program's outcome, never the platform's.
    """
    for name, parse in ((SCORES_JSON, json.loads), (SCORES_TXT, yaml.safe_load)):
        data = _read_output(output, name, MAX_SCORES_BYTES)
        if data is None:
            continue
        if len(data) > MAX_SCORES_BYTES:
            raise ProgramProblem(f"{name} is larger than {MAX_SCORES_BYTES} bytes")
        try:
            document = parse(data.decode("utf-8-sig"))
        except RecursionError:
            raise ProgramProblem(f"{name} cannot be read (it is nested too deeply)") from None
        except (ValueError, yaml.YAMLError) as exc:
            raise ProgramProblem(f"{name} cannot be read ({str(exc)[:300]})") from None
        if not isinstance(document, dict):
            raise ProgramProblem(f"{name} does not hold 'label: value' pairs")
        scores: dict[str, float] = {}
        unusable: dict[str, str] = {}
        for key, value in document.items():
            number = storable(value)
            if isinstance(number, str):
                unusable[str(key)] = number
            else:
                scores[str(key)] = number
        return scores, unusable
    raise ProgramProblem("it wrote neither scores.json nor scores.txt")


def sanitized_html(output: Path) -> str | None:
    """``detailed_results.html`` without scripts, styles, event handlers or foreign URL schemes."""
    data = _read_output(output, DETAILED, MAX_DETAILED_BYTES)
    if not data:
        return None
    return nh3.clean(data[:MAX_DETAILED_BYTES].decode("utf-8", "replace"))


@dataclass(frozen=True)
class Workspace:
    """The host folders of one run; only ``program``, ``input`` and ``output`` are ever bound."""

    root: Path

    @property
    def program(self) -> Path:
        return self.root / "program"

    @property
    def ref(self) -> Path:
        return self.root / "input" / "ref"

    @property
    def res(self) -> Path:
        return self.root / "input" / "res"

    @property
    def output(self) -> Path:
        return self.root / "output"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def binds(self, program: Path) -> list[Bind]:
        return [
            Bind(program, "/app/program"),
            Bind(self.root / "input", "/app/input"),
            Bind(self.root / "shared", "/app/shared"),
            Bind(self.output, "/app/output", writable=True),
        ]


def run_program(
    program: bytes,
    reference: bytes,
    submission: bytes,
    *,
    limits: Limits,
    runtime: Runtime | None,
    isolation: str = "bwrap",
    scratch: Path | None = None,
    unpack_limits: Mapping[str, int] | None = None,
) -> ProgramOutcome:
    """Unpack the three zips, run the program on them and read what it wrote.

    Raises ``ProgramProblem`` or ``ArchiveProblem`` when the stored program or reference data cannot be
    used (the organizer's to fix), and ``SandboxUnavailable`` when the sandbox cannot run here (the
    operator's). Whatever the submission makes the program do is in the outcome.
    """
    bounds = {"max_bytes": 4 * 1024**3, "max_entries": 100_000, **(unpack_limits or {})}
    with run_folder("podium-program-", scratch) as run_root:
        space = Workspace(run_root)
        for folder in (space.output, space.logs, space.root / "shared", space.res):
            folder.mkdir(parents=True)
        unpack(program, space.program, what="scoring program", **bounds)
        unpack(reference, space.ref, what="reference data", **bounds)
        root = program_root(space.program)
        command = substitute(read_command(root))
        try:
            unpack(submission, space.res, what="submission", **bounds)
        except ArchiveProblem as exc:
            problem = f"The submission could not be unpacked: {exc}."
            return ProgramOutcome({}, None, failure=problem, detail=problem)
        result = run(
            ["/bin/sh", "-c", command],
            space.binds(root),
            cwd="/app/program",
            logs=space.logs,
            limits=limits,
            runtime=runtime,
            env=PROGRAM_ENV,
            isolation=isolation,
        )
        return _outcome(result, space.output)


def _outcome(result: RunResult, output: Path) -> ProgramOutcome:
    html = sanitized_html(output) if not result.output_exceeded else None
    if not result.ok:
        return ProgramOutcome(
            {}, result, html, failure=TEAM_FAILURE, detail=f"The scoring program failed: {result.describe()}."
        )
    try:
        scores, ignored = parse_scores(output)
    except ProgramProblem as exc:
        return ProgramOutcome({}, result, html, failure=TEAM_FAILURE, detail=f"The scoring program ran, but {exc}.")
    return ProgramOutcome(scores, result, html, ignored=ignored)
