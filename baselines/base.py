"""The contract every hosted baseline fulfils.

A baseline takes a task's training files and a phase's public inputs (plus, for a few systems,
organizer-only resources) and returns a submission file in the task's format, as bytes. It does
no I/O of its own and reads no settings, so the same call runs in a GPU worker, in a test and on a
laptop. The caller passes three callbacks: ``progress(done, total)`` (units of work, ``done``
reaches ``total`` when the run ends), ``log(line)`` and ``should_stop()``; a run that is asked to
stop raises ``Cancelled`` at its next check, between batches.
"""

from __future__ import annotations

import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from baselines.errors import BadOptions, Cancelled, InvalidInputs
from scorers.options import OptionSpec, check_type, resolve

ProgressFn = Callable[[int, int], None]
LogFn = Callable[[str], None]
StopFn = Callable[[], bool]


@dataclass(frozen=True)
class BaselineInputs:
    """What a run reads: every file by name, in the formats of the task's release and inputs.

    ``training`` holds the task's training files (release formats), ``inputs`` the phase's public
    input files (the formats participants download), ``resources`` organizer-only files that are
    never shown to participants (e.g. the FAMuS report-side gold that the report baseline copies).
    """

    scorer: str
    training: Mapping[str, bytes] = field(default_factory=dict)
    inputs: Mapping[str, bytes] = field(default_factory=dict)
    resources: Mapping[str, bytes] = field(default_factory=dict)


class RunContext:
    """Progress, log and cancellation for one run, so systems need not thread three callbacks."""

    def __init__(self, progress: ProgressFn, log: LogFn, should_stop: StopFn) -> None:
        self._progress = progress
        self._log = log
        self._should_stop = should_stop
        self.done = 0
        self.total = 0

    def log(self, line: str) -> None:
        self._log(line)

    def check(self) -> None:
        """Raise ``Cancelled`` if the caller asked the run to stop."""
        if self._should_stop():
            raise Cancelled("the run was cancelled")

    def start(self, total: int) -> None:
        """Announce the units of work this run will do (reported as 0 of ``total``)."""
        self.check()
        self.total = max(total, 0)
        self.done = 0
        self._progress(0, self.total)

    def advance(self, count: int = 1) -> None:
        """Count ``count`` more units done, report them, and stop here if asked to."""
        self.done = min(self.done + count, self.total)
        self._progress(self.done, self.total)
        self.check()

    def finish(self) -> None:
        if self.done != self.total:
            self.done = self.total
            self._progress(self.done, self.total)


class Baseline(ABC):
    """Base class of the registered baseline systems. Subclasses set the class attributes below."""

    name: ClassVar[str]
    version: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str] = ""
    #: The scorers (task kinds) whose submission format this system writes.
    scorers: ClassVar[tuple[str, ...]]
    #: True when the system runs a neural model and should go to a GPU worker when there is one.
    wants_gpu: ClassVar[bool] = False
    #: What the system reads besides the phase's inputs: ``training`` (the task's training files) and/or
    #: ``resources`` (organizer-only files); a task without them is no place to run it (``podium demo`` skips it).
    needs: ClassVar[tuple[str, ...]] = ("training",)
    options: ClassVar[tuple[OptionSpec, ...]] = ()
    #: The modules the system imports when it runs, beyond Podium's own dependencies (found without
    #: importing them, so a listing stays quick); a system with one missing is listed as unavailable.
    requires: ClassVar[tuple[str, ...]] = ()
    #: Podium's optional extra that installs ``requires``.
    extra: ClassVar[str] = "baselines-light"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        #: The resolved option values (defaults overlaid with what the run gives).
        self.config: dict[str, Any] = self.resolve_options(options or {})

    @classmethod
    def resolve_options(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults overlaid with ``given``; unknown names and wrong types are refused (``BadOptions``)."""
        owner = f"baseline {cls.name}"
        specs = {spec.name: spec for spec in cls.options}
        return resolve(
            cls.options,
            given,
            owner=owner,
            error=BadOptions,
            check=lambda name, value: check_type(specs[name], value, owner=owner, error=BadOptions),
        )

    @classmethod
    def missing(cls) -> list[str]:
        """The modules of ``requires`` that this installation lacks (none: the system can run here)."""
        return [module for module in cls.requires if not _installed(module)]

    @classmethod
    def install_hint(cls) -> str:
        """What to install for the system to run: the pip command of its extra."""
        return f"pip install 'podium[{cls.extra}]'"

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """Everything a page or the API shows about the system, as plain data; ``available`` and ``missing``
        say whether this installation can run it, ``install`` what to install when it cannot."""
        missing = cls.missing()
        return {
            "available": not missing,
            "missing": missing,
            "install": cls.install_hint(),
            "name": cls.name,
            "version": cls.version,
            "title": cls.title,
            "description": cls.description,
            "scorers": list(cls.scorers),
            "wants_gpu": cls.wants_gpu,
            "options": [{"name": o.name, "default": o.default, "meaning": o.meaning} for o in cls.options],
        }

    def run(
        self,
        inputs: BaselineInputs,
        progress: ProgressFn,
        log: LogFn,
        should_stop: StopFn,
    ) -> bytes:
        """Produce the submission file's bytes; raise ``InvalidInputs`` or ``Cancelled``."""
        if inputs.scorer not in self.scorers:
            raise InvalidInputs(
                f"baseline {self.name} writes submissions for {', '.join(self.scorers)}, not for {inputs.scorer}"
            )
        context = RunContext(progress, log, should_stop)
        context.check()
        submission = self.produce(inputs, context)
        context.finish()
        return submission

    @abstractmethod
    def produce(self, inputs: BaselineInputs, context: RunContext) -> bytes:
        """The system itself: read ``inputs``, report through ``context``, return the submission."""


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported here, found without importing it (a dotted name whose parent is
    missing is missing too)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
