"""``program``: a CodaLab or Codabench competition's own scoring program, run in the sandbox.

Gold: a zip archive holding ``program.zip`` (the scoring program, with its ``metadata``) and
``reference.zip`` (the reference data), which ``podium competition create`` makes of a CodaLab or
Codabench bundle's phase (``pack_gold``). Submission: a zip archive of result files, given to the program
unpacked as ``/app/input/res`` (checked at upload for its names, links and size, and refused when it holds
no files or lacks one of the phase's ``result_files``: what the files mean is the program's business). The
scores are the numbers the program writes (``scores.json``, else ``scores.txt``); ``codalab.program`` runs it.

Options: ``metrics``, the leaderboard's columns in order (``key``, ``title``, ``higher_is_better``,
``decimals``; the first ranks); ``image``, the image the bundle names, which picks the runtime
(``PODIUM_PROGRAM_RUNTIMES``); ``result_files``, the names a result zip must hold (public, like every
option: what the phase's sample result or starting kit shows). The server runs the program through ``run``
with its own runtime table, sandbox and the phase's time limit; ``score``/``compute`` (``podium score``) use
the sandbox, default limits and this Python's environment.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codalab.archives import ArchiveProblem, check
from scorers.base import MetricSpec, OptionSpec, Scorer, ScoreReport, UnitStats
from scorers.errors import InvalidGold, InvalidSubmission, NoSample, OptionsError, Problem
from scorers.registry import register

if TYPE_CHECKING:  # the program's runner (PyYAML, nh3, the sandbox) is imported when a program runs, not before
    from codalab.program import ProgramOutcome
    from sandbox import Limits

PROGRAM_ENTRY, REFERENCE_ENTRY = "program.zip", "reference.zip"
#: Bounds on what a result submission may unpack to (the program reads it; Podium only checks it).
MAX_RESULT_BYTES = 1024**3
MAX_RESULT_ENTRIES = 10_000
#: The unit of the per-unit statistics: the program scores a submission as a whole.
WHOLE = "submission"


def pack_gold(program: bytes, reference: bytes) -> bytes:
    """The gold file of a program phase: the program's zip and the reference data's zip, side by side."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in ((PROGRAM_ENTRY, program), (REFERENCE_ENTRY, reference)):
            archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()


@dataclass(frozen=True)
class ProgramGold:
    program: bytes = field(repr=False)
    reference: bytes = field(repr=False)


@dataclass(frozen=True)
class NothingPublic:
    """A program phase publishes nothing a submission is checked against."""


@dataclass(frozen=True)
class ProgramEnvironment:
    """Where and how the program runs: the runtime table, the isolation and the limits."""

    runtimes: Mapping[str, Path] = field(default_factory=dict)
    isolation: str = "bwrap"
    #: None: the sandbox's default limits.
    limits: Limits | None = None
    scratch: Path | None = None


class ProgramFailed(Exception):
    """The program gave no scores for this submission (``outcome`` says how it ended)."""

    def __init__(self, outcome: ProgramOutcome) -> None:
        super().__init__(outcome.detail or outcome.failure or "the scoring program failed")
        self.outcome = outcome


def _is_result_name(name: Any) -> bool:
    return (
        isinstance(name, str)
        and bool(name.strip())
        and not name.startswith(("/", "\\"))
        and ".." not in name.replace("\\", "/").split("/")
    )


def result_names(data: bytes) -> set[str]:
    """The files a (checked) result zip holds, as the program sees them under ``res/``: folders and the
    ``__MACOSX`` folder a Mac's archiver adds are not files the program reads."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = (name.removeprefix("./") for name in archive.namelist())
        return {name for name in names if name and not name.endswith("/") and not name.startswith("__MACOSX/")}


def _columns(options: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    columns = (options or {}).get("metrics") or []
    return [c for c in columns if isinstance(c, dict) and isinstance(c.get("key"), str)]


@register
class ProgramScorer(Scorer[ProgramGold, NothingPublic, bytes]):
    name = "program"
    version = "1"
    title = "Scoring program (CodaLab, Codabench)"
    description = (
        "Runs the competition's own scoring program in a sandbox, as CodaLab and Codabench do, on a zip of "
        "result files; the metrics are the numbers it writes, named by the leaderboard's columns."
    )
    primary_metric = "score"
    metrics = (MetricSpec("score", "the number the scoring program writes as score"),)
    options = (
        OptionSpec("metrics", [], "the leaderboard's columns: key, title, higher_is_better, decimals; the first ranks"),
        OptionSpec("image", "", "the image the bundle names; it picks the runtime (PODIUM_PROGRAM_RUNTIMES)"),
        OptionSpec(
            "result_files",
            [],
            "the files a result submission must hold at the top of its zip, as the phase's sample result or "
            "starting kit shows them (public); empty: any files",
        ),
    )
    gold_format = "zip of program.zip (the scoring program) and reference.zip (the reference data)"
    submission_format = "zip archive of result files, as the scoring program reads them"
    submission_filename = "results.zip"
    unit = WHOLE
    #: The program scores a submission as a whole: there are no per-document rows to download.
    per_unit_breakdown = None
    splittable = False
    raw_submission = True

    @classmethod
    def check_option(cls, name: str, value: Any) -> Any:
        if name == "result_files":
            names = value if isinstance(value, list) else None
            if names is None or not all(_is_result_name(n) for n in names) or len(set(names)) != len(names):
                raise OptionsError(
                    f"option 'result_files' of {cls.name} must be a list of distinct file names inside the zip "
                    "(relative, without '..')"
                )
            return value
        if name != "metrics":
            return super().check_option(name, value)
        if not isinstance(value, list):
            raise OptionsError(f"option 'metrics' of {cls.name} must be a list of columns")
        keys: set[str] = set()
        for column in value:
            key = column.get("key") if isinstance(column, dict) else None
            if not isinstance(key, str) or not key.strip() or key in keys:
                raise OptionsError(f"option 'metrics' of {cls.name}: each column needs a key of its own, not {key!r}")
            decimals = column.get("decimals")
            if decimals is not None and (
                isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 12
            ):
                raise OptionsError(
                    f"option 'metrics' of {cls.name}: decimals of {key!r} must be a whole number 0 to 12"
                )
            if not isinstance(column.get("higher_is_better", True), bool):
                raise OptionsError(f"option 'metrics' of {cls.name}: higher_is_better of {key!r} must be true/false")
            keys.add(key)
        return value

    @classmethod
    def configured_metrics(cls, config: Mapping[str, Any]) -> tuple[str, tuple[str, ...], tuple[MetricSpec, ...]]:
        """The leaderboard's columns, in order; a program's numbers (a duration, an error) are shown as written."""
        columns = _columns(config)
        if not columns:
            return super().configured_metrics(config)
        metrics = tuple(
            MetricSpec(
                c["key"],
                str(c.get("title") or c["key"]),
                bool(c.get("higher_is_better", True)),
                fraction=False,
                decimals=c["decimals"] if isinstance(c.get("decimals"), int) else None,
                title=str(c.get("title") or ""),
            )
            for c in columns
        )
        return metrics[0].name, tuple(m.name for m in metrics[1:]), metrics

    def parse_gold(self, data: bytes) -> ProgramGold:
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
            parts = {name: archive.read(name) for name in (PROGRAM_ENTRY, REFERENCE_ENTRY)}
        except (zipfile.BadZipFile, KeyError, ValueError, EOFError, NotImplementedError) as exc:
            raise InvalidGold(
                [Problem("gold", f"expected a zip of {PROGRAM_ENTRY} and {REFERENCE_ENTRY} ({exc})")]
            ) from None
        return ProgramGold(parts[PROGRAM_ENTRY], parts[REFERENCE_ENTRY])

    def public_view(self, gold: ProgramGold) -> NothingPublic:
        return NothingPublic()

    def parse_submission(self, data: bytes, public: NothingPublic) -> bytes:
        return self.parse_raw(data, public, max_bytes=MAX_RESULT_BYTES)

    def parse_raw(self, data: bytes, public: NothingPublic, *, max_bytes: int) -> bytes:
        if not data.startswith(b"PK"):
            problem = "a result submission is a zip archive of the files the scoring program reads"
            raise InvalidSubmission([Problem("zip archive", problem)])
        try:
            check(data, max_bytes=min(max_bytes, MAX_RESULT_BYTES), max_entries=MAX_RESULT_ENTRIES, what="submission")
        except ArchiveProblem as exc:
            raise InvalidSubmission([Problem("zip archive", str(exc))]) from None
        self._check_names(data)
        return data

    def _check_names(self, data: bytes) -> None:
        """Refuse, from public facts only (the phase's declared ``result_files``), what the program cannot score:
        a zip without files, or one that lacks a file the phase declares. The refusal names what it expects."""
        expected = list(self.config.get("result_files") or [])
        wants = (
            f"this phase's scoring program reads {', '.join(expected)} at the top of the zip"
            if expected
            else "this phase's scoring program reads the result files its starting kit or pages describe"
        )
        held = result_names(data)
        if not held:
            raise InvalidSubmission([Problem("zip archive", f"the zip holds no files; {wants}")])
        missing = [name for name in expected if name not in held]
        if missing:
            shown = ", ".join(sorted(held)[:5]) + (", ..." if len(held) > 5 else "")
            problem = f"the zip lacks {', '.join(missing)} (it holds {shown}); {wants}"
            raise InvalidSubmission([Problem("zip archive", problem)])

    def sample_submission(self, public: NothingPublic) -> bytes:
        raise NoSample(
            "the files of a result submission are the ones only the competition's scoring program knows; "
            "its starting kit or pages describe them"
        )

    def run(self, gold: ProgramGold, submission: bytes, environment: ProgramEnvironment) -> ProgramOutcome:
        """Run the program on ``submission``. Raises ``ProgramProblem``, ``ArchiveProblem``, ``RuntimeProblem``
        (the stored program, its data or the runtime cannot be used) and ``SandboxUnavailable``."""
        from codalab.program import run_program
        from sandbox import Limits, choose_runtime

        runtime, _ = choose_runtime(self.config["image"] or None, environment.runtimes)
        return run_program(
            gold.program,
            gold.reference,
            submission,
            limits=environment.limits or Limits(),
            runtime=runtime,
            isolation=environment.isolation,
            scratch=environment.scratch,
        )

    def scores(self, outcome: ProgramOutcome) -> dict[str, float]:
        """The scores of a run that succeeded; ``ProgramFailed`` when it failed or lacks a column."""
        if not outcome.ok:
            raise ProgramFailed(outcome)
        missing = [c["key"] for c in _columns(self.config) if c["key"] not in outcome.scores]
        if missing:
            # A value Podium cannot store (too large, not finite, not a number) is the program's doing, as a
            # missing one is: the team's file is judged, the organizers read which column and why.
            why = [f"{key} ({outcome.ignored[key]})" if key in outcome.ignored else key for key in missing]
            detail = (
                "The scoring program ran, but its scores lack a number Podium can store for the leaderboard "
                f"column(s) {', '.join(why)}."
            )
            raise ProgramFailed(replace(outcome, failure="no scores", detail=detail))
        return dict(outcome.scores)

    def unit_stats(self, gold: ProgramGold, submission: bytes) -> dict[str, UnitStats]:
        outcome = self.run(gold, submission, ProgramEnvironment())
        return {WHOLE: self.scores(outcome)}

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        if not stats:
            return {}
        keys = sorted(set().union(*(s.keys() for s in stats)))
        return {key: sum(float(s.get(key, 0.0)) for s in stats) / len(stats) for key in keys}

    def breakdown(self, gold: ProgramGold, submission: bytes, stats: Mapping[str, UnitStats]) -> dict[str, Any]:
        return {}

    def report(self, scores: Mapping[str, float]) -> ScoreReport:
        """The report of a run that gave ``scores``."""
        return ScoreReport(self.name, self.version, dict(scores), {}, {WHOLE: dict(scores)})
