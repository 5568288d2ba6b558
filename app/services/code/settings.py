"""How a code phase runs its programs (``CodeSettings``: the ``code:`` keys of a bundle but its inputs), and the
operator's caps on what a bundle may ask for (``CodeCaps``, from ``PODIUM_CODE_MAX_TIME_S``,
``PODIUM_CODE_MAX_MEMORY_MB`` and ``PODIUM_CODE_ALLOW_GPU``). Stored on the phase as a mapping (``Phase.code``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from app.config import Settings

#: What runs when neither the phase nor the program's ``metadata`` names a command (Codabench's convention).
DEFAULT_COMMAND = "python predict.py /input /output"
DEFAULT_TIME_S = 600
DEFAULT_MEMORY_MB = 4096


@dataclass(frozen=True)
class CodeSettings:
    """How one code phase runs a program: ``output`` is the prediction file's name in /output (None: the whole
    folder, zipped, for scorers that read a zip as it is); ``runtime`` the name of a runtime of the operator's
    table (None: the default); limits for all the run's processes together; ``show_logs``: the team reads
    its program's stdout and stderr (never by default: a program can print the hidden inputs)."""

    command: str = DEFAULT_COMMAND
    output: str | None = None
    runtime: str | None = None
    time_limit_s: int = DEFAULT_TIME_S
    memory_mb: int = DEFAULT_MEMORY_MB
    show_logs: bool = False
    #: The name of the starting kit's zip among the phase's public files (``code.starting_kit``), its sample.
    starting_kit: str | None = None
    #: A run gets a GPU of its worker (``code.gpu``); with ``gpu_fallback_cpu`` a worker without one runs it on
    #: the CPU, else it waits for a worker with a GPU (``app.services.code.placement``).
    gpu: bool = False
    gpu_fallback_cpu: bool = False
    #: A CodaLab or Codabench phase with an ingestion program (``code.ingestion_program``): the ingestion
    #: program runs and imports the team's code (``app.services.code.ingestion``); a zip of result files is
    #: scored as it is.
    ingestion: bool = False

    def convention(self) -> str:
        """How the phase runs the zip a team uploads, in one sentence for its pages."""
        if self.ingestion:
            return (
                "upload a zip of your code (the files the phase's ingestion program imports, e.g. model.py); "
                "Podium runs the ingestion program with your code at /app/ingested_program and the input data at "
                "/app/input_data, then the scoring program on what it writes in /app/output. A zip of result "
                "files (no metadata file, no source files) is scored as it is"
            )
        output = f"/output/{self.output}" if self.output else "what it writes in /output"
        return (
            f"upload a zip of your program; Podium unpacks it and runs `{self.command}` (a file `metadata` in the "
            f"zip with a line `command: ...` runs another) with the inputs in /input, and scores {output}"
        )

    def stored(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, stored: dict[str, Any]) -> CodeSettings:
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in stored.items() if key in known})


@dataclass(frozen=True)
class CodeCaps:
    """The most a phase may give one run; the operator's settings."""

    max_time_s: int = 3600
    max_memory_mb: int = 16384
    allow_gpu: bool = True

    def problems(self, code: CodeSettings, path: str) -> list[tuple[str, str]]:
        """``(key path, message)`` for each limit of ``code`` above the caps."""
        out = []
        if code.time_limit_s > self.max_time_s:
            out.append(
                (f"{path}.time_limit_s", f"{code.time_limit_s} s is more than this server allows ({self.max_time_s} s)")
            )
        if code.memory_mb > self.max_memory_mb:
            out.append(
                (f"{path}.memory_mb", f"{code.memory_mb} MB is more than this server allows ({self.max_memory_mb} MB)")
            )
        if code.gpu and not code.gpu_fallback_cpu and not self.allow_gpu:
            out.append(
                (
                    f"{path}.gpu",
                    "this server gives programs no GPU (PODIUM_CODE_ALLOW_GPU is off): ask for none, or let the "
                    "programs run on the CPU with gpu_fallback_cpu: true",
                )
            )
        return out

    def scoring_problems(self, execution_time_limit: int | None, path: str) -> list[tuple[str, str]]:
        """``(key path, message)`` where a phase's scoring program (``execution_time_limit``, seconds) asks for
        more time than the caps give one run: the same cap as a program's run, since both hold a worker."""
        if execution_time_limit is not None and execution_time_limit > self.max_time_s:
            message = f"{execution_time_limit} s is more than this server allows ({self.max_time_s} s)"
            return [(f"{path}.execution_time_limit", message)]
        return []


def caps_of(settings: Settings) -> CodeCaps:
    """The caps this server's settings give (``PODIUM_CODE_MAX_TIME_S``, ``PODIUM_CODE_MAX_MEMORY_MB``,
    ``PODIUM_CODE_ALLOW_GPU``)."""
    return CodeCaps(
        max_time_s=settings.code_max_time_s,
        max_memory_mb=settings.code_max_memory_mb,
        allow_gpu=settings.code_allow_gpu,
    )
