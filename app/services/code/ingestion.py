"""Code phases with a CodaLab or Codabench ingestion program: the same run as any code phase, laid out as those
platforms lay out their prediction step (``codalab.ingestion`` holds their conventions and cites them).

The phase's stored inputs (one zip, ``Phase.code_inputs_blob_id``) hold the ingestion program
(``ingestion_program.zip``) and the task's input data (under ``input_data/``; a zip there is unpacked, as
Codabench unpacks its input data bundle). A run unpacks them beside the team's code and runs the ingestion
program's command (``/app/program``) with the code at ``/app/ingested_program``, the input data at
``/app/input_data`` and an empty ``/app/output``; never the reference data, which only the scoring program
reads (``input/ref``, in the scoring job). What the ingestion program writes in ``/app/output``, with the
``metadata`` file Codabench adds, is zipped and becomes the submission's file, scored by the phase's
scoring program as ``input/res``: a result submission takes the same way from there.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from app.services.bundles.spec import BundleFile
from codalab import ingestion
from codalab.archives import ArchiveProblem, is_zip, unpack
from codalab.program import ProgramProblem, find_metadata, program_root, read_command
from sandbox import Bind, RunResult

#: The names under which the phase's stored inputs keep the ingestion program and the input data.
PROGRAM_ENTRY = "ingestion_program.zip"
INPUT_DATA = "input_data"
#: How much the stored ingestion program and input data may unpack to.
UNPACK = {"max_bytes": 4 * 1024**3, "max_entries": 100_000}


def stored_inputs(program: BundleFile, inputs: Sequence[BundleFile]) -> tuple[BundleFile, ...]:
    """The files the phase's inputs zip holds: the ingestion program and each input under ``input_data/``."""
    return (
        BundleFile(PROGRAM_ENTRY, program.data, program.sha256),
        *(BundleFile(f"{INPUT_DATA}/{file.name}", file.data, file.sha256, file.derived) for file in inputs),
    )


def program_problem(data: bytes) -> str | None:
    """Why ``data`` cannot serve as an ingestion program (a zip whose ``metadata`` names a command), or None."""
    if not is_zip(data):
        return "the ingestion program must be a zip (with a metadata file naming its command)"
    with tempfile.TemporaryDirectory(prefix="podium-ingestion-") as tmp:
        try:
            unpack(data, Path(tmp), what="ingestion program", **UNPACK)
            read_command(program_root(Path(tmp)))
        except (ArchiveProblem, ProgramProblem) as exc:
            return str(exc).replace("scoring program", "ingestion program")
    return None


class Layout(NamedTuple):
    """What the sandbox runs: the command, and the folders bound into it."""

    command: str
    binds: list[Bind]


def prepare(space: Path, code: Path) -> Layout:
    """Lay out one run in ``space`` (whose ``input`` holds the unpacked stored inputs and ``output`` is empty)
    for the team's code unpacked at ``code``. Raises ``ArchiveProblem`` or ``ProgramProblem`` for stored
    inputs that cannot be used (the platform's failure, never the team's)."""
    stored = space / "input"
    program = space / "ingestion"
    unpack(stored / PROGRAM_ENTRY, program, what="ingestion program", **UNPACK)
    root = program_root(program)
    command = ingestion.substitute(read_command(root))
    data = space / INPUT_DATA
    data.mkdir()
    source = stored / INPUT_DATA
    for file in sorted(source.iterdir()) if source.is_dir() else []:
        with file.open("rb") as head:
            zipped = is_zip(head.read(4))
        if zipped:
            unpack(file, data, what="input data", **UNPACK)
        else:
            shutil.copyfile(file, data / file.name)
    (space / "shared").mkdir()
    if find_metadata(code) is None:
        # Codabench copies a submission without a metadata file into the output before the ingestion runs
        # (``_run_program_directory``, kind "program": "assuming it's going to be handled by ingestion").
        shutil.copytree(code, space / "output", dirs_exist_ok=True, symlinks=True)
    return Layout(
        command,
        [
            Bind(root, ingestion.PROGRAM),
            Bind(code, ingestion.INGESTED),
            Bind(data, ingestion.INPUT_DATA),
            Bind(space / "output", ingestion.OUTPUT, writable=True),
            Bind(space / "shared", ingestion.SHARED, writable=True),
        ],
    )


def finish(output: Path, result: RunResult) -> str | None:
    """Add the ``metadata`` file Codabench adds to the output; why the output cannot be used, or None."""
    status = output / ingestion.STATUS_FILE
    if status.exists() or status.is_symlink():
        # Codabench refuses it too (``push_output``): the file is the platform's.
        return (
            "The ingestion program's output was not used: it holds a file named metadata, which the platform "
            "writes (the exit codes and times)."
        )
    text = ingestion.status_file(ingestion_exit_code=result.exit_code, elapsed_seconds=round(result.wall_seconds, 3))
    try:
        status.write_text(text, encoding="utf-8")
    except OSError:
        return "The ingestion program's output was not used: it left /app/output unwritable."
    return None
