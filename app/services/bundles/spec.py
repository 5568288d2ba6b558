"""What a competition bundle describes, as plain values (``CompetitionSpec`` and its parts), and
``BundleError``, which lists every mistake of a bundle under its key path."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.services.code.settings import CodeSettings
from app.services.errors import ServiceError
from leaderboard.multi import BoardSpec


@dataclass(frozen=True)
class BundleFile:
    """A file read into memory, with the name people see and its sha256; ``derived`` marks the inputs
    derived from the phase's gold (made again from it when the gold's ids are replaced)."""

    name: str
    data: bytes
    sha256: str
    derived: bool = False


@dataclass(frozen=True)
class PhaseSpec:
    """One evaluation phase of a task: its window, gold, public files, limits and leaderboard rules."""

    slug: str
    title: str
    description: str
    starts_at: datetime | None
    ends_at: datetime | None
    gold: BundleFile
    public_files: tuple[BundleFile, ...]
    daily_limit: int | None
    total_limit: int | None
    visibility: str
    selection: str
    max_upload_bytes: int | None
    #: Publish and score the phase with opaque ids instead of the gold's own (``opaque_ids: true``).
    opaque_ids: bool = False
    #: The board shows confidence intervals and neighbour comparisons (``intervals: false`` turns them off).
    intervals: bool = True
    #: ``plain``, or ``ladder``: a team's public score moves only past the paired standard error (the Ladder).
    board: str = "plain"
    #: Further boards (``boards``): each its metrics, slice of the units and ranking (``leaderboard.multi``).
    boards: tuple[BoardSpec, ...] = ()
    #: For the ``program`` scorer: the wall time of one run in seconds (None: 10 minutes), whether a team
    #: reads the end of a failed run's stderr, and whether the phase had an ingestion program (its page says
    #: so; ``code.ingestion`` runs it on code submissions).
    execution_time_limit: int | None = None
    show_program_stderr: bool = False
    ingestion_program: bool = False
    #: A code phase: participants upload programs, run on ``code`` inputs (``code_inputs``) as ``code`` says.
    code: CodeSettings | None = None
    code_inputs: tuple[BundleFile, ...] = ()
    #: A private test split (``app.services.bundles.split_keys``): the share of units kept private until the
    #: reveal (None: no split) and what the board ranks by after it (``private`` or ``all`` units).
    private_share: float | None = None
    private_board: str = "private"
    #: How many submissions a team marks as final (None: the public board's choice counts on the private board),
    #: and when the public board stops changing until the reveal (None: never).
    final_submissions: int | None = None
    frozen_at: datetime | None = None


@dataclass(frozen=True)
class TaskSpec:
    """A task: its scorer, public training files, organizer-only resources and phases."""

    slug: str
    title: str
    description: str
    scorer: str
    scorer_options: dict[str, Any]
    training_files: tuple[BundleFile, ...]
    resources: tuple[BundleFile, ...]
    phases: tuple[PhaseSpec, ...]


@dataclass(frozen=True)
class CompetitionSpec:
    """A whole competition as a bundle describes it; nothing in it is stored yet."""

    slug: str
    title: str
    description: str
    organizers: tuple[str, ...]
    participation: str
    tasks: tuple[TaskSpec, ...]
    #: ``(key path, message)``: what loads but is probably a mistake (the scorers' ``config_warnings``); the
    #: command line and the API show them to the organizer.
    warnings: tuple[tuple[str, str], ...] = ()
    #: Most bytes every team's submissions together, and each team's, may take (None: the operator's default).
    storage_quota_bytes: int | None = None
    team_storage_quota_bytes: int | None = None


class BundleError(ServiceError):
    """A bundle that cannot be loaded; ``problems`` lists every mistake as ``(key path, message)``."""

    status = 422
    default_code = "invalid_bundle"

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = list(problems)
        super().__init__(self.summary())

    def summary(self) -> str:
        n = len(self.problems)
        lines = [f"The bundle was refused: {n} problem{'s' if n != 1 else ''}."]
        lines += [f"- {key}: {message}" if key else f"- {message}" for key, message in self.problems]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        problems = [{"key": key, "message": message} for key, message in self.problems]
        return {"error": self.code, "detail": self.message, "problems": problems, "total": len(problems)}
