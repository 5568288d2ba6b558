"""What a remote worker reports of one run: the body it sends (``app.worker.remote``) and the platform takes
(``protocol.finish``), one dataclass for both sides. No database here: the worker imports it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Report:
    """How the program ran on the worker (``sandbox.RunResult``'s facts), or why the worker could not run it
    (``platform_problem``: refunded), or why this worker cannot run programs at all (``cannot_run``: its sandbox
    does not work; the run is put back to wait, its attempt not counted), or why it gave no predictions
    (``failure``: the program's fault)."""

    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    output_exceeded: bool = False
    out_of_memory: bool = False
    wall_seconds: float = 0.0
    peak_memory_bytes: int | None = None
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    failure: str | None = None
    platform_problem: str | None = None
    cannot_run: str | None = None
    #: The GPU it ran on ("GPU 0"; None: the CPU).
    device: str | None = None
