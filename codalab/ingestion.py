"""CodaLab and Codabench ingestion programs: the conventions by which they run a code submission.

A phase whose task has an ``ingestion_program`` runs it on each code submission (the prediction step), then
its scoring program on what the ingestion program wrote (the scoring step). The conventions here are those
of Codabench's compute worker (github codalab/codabench, ``compute_worker/compute_worker.py``: ``Run.prepare``,
``Run.start``, ``_run_program_directory``, ``replace_legacy_metadata_command``, ``push_output``) and of
CodaLab v1.5's worker (github codalab/competitions-v1-compute-worker, ``worker.py``, the prediction step):

| path | what | access |
|---|---|---|
| ``/app/program`` | the ingestion program (its ``metadata`` command runs here, the working folder) | read-only |
| ``/app/ingested_program`` | the unzipped code submission | read-only |
| ``/app/input_data`` | the task's input data (never the reference data) | read-only |
| ``/app/output`` | empty; what the ingestion program writes here is the scoring program's ``input/res`` | read-write |
| ``/app/shared`` | an empty folder (``$shared``) | read-write |

The reference data is mounted only where the scoring program runs: Codabench binds ``/app/input`` (with
``input/ref``) only when ``is_scoring``, and CodaLab v1.5 binds its hidden folder to the ingestion program
only where a phase asks for it (``$hidden``); Podium never does, so ``$hidden`` names a path that does not
exist there.

A submission's own ``metadata`` command, which Codabench starts in a second container beside the ingestion
program (with the submission at ``/app/program``), is not run: one run is one sandbox, where ``/app/program``
is the ingestion program (examples/README.md, "Ingestion programs", says why); ``exitCode`` stays null.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

import yaml

from codalab.archives import JUNK_FOLDERS
from codalab.program import METADATA_FILES

#: Where each part of an ingestion run is, inside the sandbox (Codabench's mounts, ``_run_program_directory``).
PROGRAM = "/app/program"
INGESTED = "/app/ingested_program"
INPUT_DATA = "/app/input_data"
OUTPUT = "/app/output"
SHARED = "/app/shared"
#: What the v1.5 placeholders of an ingestion program's command stand for during the prediction step:
#: Codabench's ``replace_legacy_metadata_command(command, kind="ingestion", is_scoring=False)``. (CodaLab
#: v1.5's own worker gives the same meaning to each, with its run folder's paths; ``$hidden`` there is the
#: reference data, which Podium does not give an ingestion program.)
PLACEHOLDERS = {
    "input": INPUT_DATA,
    "output": OUTPUT,
    "program": PROGRAM,
    "ingestion_program": PROGRAM,
    "hidden": "/app/input/ref",
    "shared": SHARED,
    "submission_program": INGESTED,
    "tmp": OUTPUT,
    "predictions": OUTPUT,
}
_PLACEHOLDER = re.compile(r"\$\{?(" + "|".join(sorted(PLACEHOLDERS, key=len, reverse=True)) + r")\}?(?![A-Za-z0-9_])")
#: The file Codabench adds to the prediction step's output (``push_output``: the exit codes and times, for
#: v1.5 scoring programs that read ``input/res/metadata``); an ingestion program may not write it itself.
STATUS_FILE = "metadata"
#: The ends of file names that make a zip a program rather than results (with a ``metadata`` file).
SOURCE_SUFFIXES = frozenset(
    {
        ".py", ".ipynb", ".r", ".jl", ".m", ".sh", ".bash", ".java", ".scala", ".kt",
        ".c", ".cc", ".cpp", ".rs", ".go", ".js", ".rb", ".pl", ".lua", ".jar",
    }
)  # fmt: skip


def substitute(command: str) -> str:
    """The ingestion program's command with ``$input``, ``$output``, ``$submission_program``... replaced."""
    return _PLACEHOLDER.sub(lambda m: PLACEHOLDERS[m.group(1)], command)


def _names(data: bytes) -> list[PurePosixPath]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = [PurePosixPath(n.removeprefix("./")) for n in archive.namelist() if not n.endswith("/")]
    return [n for n in names if n.parts and n.parts[0] not in JUNK_FOLDERS and n.name != ".DS_Store"]


def is_code_submission(data: bytes) -> bool:
    """Whether an upload to a phase with an ingestion program is a program (run through the ingestion program)
    rather than result files (scored as they are).

    A ``metadata`` file at the top of the zip (or of its one folder) makes it code, as CodaLab v1.5's worker
    decides (``is_code_submission = exists(program/metadata)``; Codabench also reads ``metadata.yaml``); so
    does a source file (Codabench's sample submissions hold only ``model.py``, which the ingestion program
    imports). Anything else, or what is not a zip, is results.
    """
    try:
        names = _names(data)
    except (zipfile.BadZipFile, ValueError, OSError):
        return False
    tops = {n.parts[0] for n in names}
    inner = len(tops) == 1 and all(len(n.parts) > 1 for n in names)
    at_top = {n.parts[1] if inner else n.parts[0] for n in names if len(n.parts) == (2 if inner else 1)}
    if at_top & set(METADATA_FILES):
        return True
    return any(n.suffix.lower() in SOURCE_SUFFIXES for n in names)


def status_file(*, ingestion_exit_code: int | None, elapsed_seconds: float) -> str:
    """The ``metadata`` file added to the output: Codabench's ``push_output`` writes ``exitCode`` (the
    submission's own process, which does not run here: null), ``elapsedTime`` (the ingestion's time when the
    submission ran no process of its own), ``ingestionExitCode`` and ``ingestionElapsedTime``."""
    status: Mapping[str, Any] = {
        "exitCode": None,
        "elapsedTime": elapsed_seconds,
        "ingestionExitCode": ingestion_exit_code,
        "ingestionElapsedTime": elapsed_seconds,
    }
    return yaml.safe_dump(dict(status), default_flow_style=False)
