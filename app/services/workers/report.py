"""What a remote worker reports of one run (``Report``) or one scoring (``ScoringReport``): the body it sends
(``app.worker.remote``) and the platform takes (``protocol.report``, ``scoring.report``), one dataclass for both
sides. No database here: the worker imports it."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from sandbox import Limits, RunResult


@dataclass(frozen=True)
class ProcessFacts:
    """How a program ran in the worker's sandbox (``sandbox.RunResult``'s facts), in both reports."""

    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    output_exceeded: bool = False
    out_of_memory: bool = False
    wall_seconds: float = 0.0
    peak_memory_bytes: int | None = None
    stdout_bytes: int = 0
    stderr_bytes: int = 0

    @staticmethod
    def of(run: RunResult) -> dict[str, Any]:
        """The facts of a run on the worker, as keyword arguments of either report."""
        return {name.name: getattr(run, name.name) for name in fields(ProcessFacts)}

    def as_run(self, limits: Limits, logs: tuple[bytes, bytes]) -> RunResult:
        """The run these facts describe, with the platform's ``limits`` and the ends of its ``logs``."""
        facts = {name.name: getattr(self, name.name) for name in fields(ProcessFacts)}
        return RunResult(**facts, stdout=logs[0], stderr=logs[1], limits=limits)


@dataclass(frozen=True)
class Report(ProcessFacts):
    """How the program ran on the worker (``sandbox.RunResult``'s facts), or why the worker could not run it
    (``platform_problem``: refunded), or why this worker cannot run programs at all (``cannot_run``: its sandbox
    does not work; the run is put back to wait, its attempt not counted), or why it gave no predictions
    (``failure``: the program's fault)."""

    failure: str | None = None
    platform_problem: str | None = None
    cannot_run: str | None = None
    #: The GPU it ran on ("GPU 0"; None: the CPU).
    device: str | None = None


@dataclass(frozen=True)
class ScoringReport(ProcessFacts):
    """How a phase's scoring program ran on the worker (``codalab.program.ProgramOutcome``'s facts: the scores it
    wrote, or why it gave none), or why the stored program could not be run (``problem``: the platform's failure,
    refunded), or why this worker cannot run programs at all (``cannot_run``: put back to wait)."""

    scores: dict[str, float] = field(default_factory=dict)
    #: Keys of the scores file whose values are not numbers Podium can store, with why.
    ignored: dict[str, str] = field(default_factory=dict)
    failure: str | None = None
    detail: str | None = None
    #: Whether the program ran (False: the submission could not even be unpacked, ``failure`` says why).
    ran: bool = True
    problem: str | None = None
    cannot_run: str | None = None
